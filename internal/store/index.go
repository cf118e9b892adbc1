package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/harness/history"
)

// indexer turns stored files into machines, benchmarks, series and
// points, inside the caller's transaction. Benchmark IDs it creates join
// the store's cache only once the transaction has committed.
type indexer struct {
	s       *Store
	version int // the schema version being written
	cache   bool
	fresh   map[[2]string]int64
	// warnings are FilePoints' of the files indexed: what the series
	// leave out.
	warnings []string
}

func newIndexer(s *Store, version int, cache bool) *indexer {
	return &indexer{s: s, version: version, cache: cache, fresh: map[[2]string]int64{}}
}

func (ix *indexer) committed() {
	if !ix.cache {
		return
	}
	ix.s.mu.Lock()
	for k, v := range ix.fresh {
		ix.s.bench[k] = v
	}
	ix.s.mu.Unlock()
}

// factKeys are the configuration keys that describe a machine.
var factKeys = []string{"machine", "cpu", "goos", "goarch", "host-pinned", "env-id", "go", "benchctl-version"}

// fileInfo is what the index keeps of a file's configuration.
type fileInfo struct {
	machine string
	at      time.Time
	facts   map[string]string
}

// RunTimeKey is the configuration key whose RFC 3339 value places a run
// in time. A file without one is placed at the time its first "#
// benchctl: made by `…` at TIME;" comment gives (benchctl's files), else
// at its upload.
const RunTimeKey = "run-time"

func readInfo(data []byte, uploaded time.Time) fileInfo {
	fi := fileInfo{at: uploaded, facts: map[string]string{}}
	if t, ok := madeAt(data); ok {
		fi.at = t
	}
	r := benchfmt.NewReader(bytes.NewReader(data), "")
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		fi.machine = string(res.GetConfig("machine-id"))
		for _, k := range factKeys {
			if v := res.GetConfig(k); v != "" {
				fi.facts[k] = string(v)
			}
		}
		if t, err := time.Parse(time.RFC3339Nano, string(res.GetConfig(RunTimeKey))); err == nil {
			fi.at = t
		}
		break
	}
	return fi
}

// madeAt reads the time of benchctl's "made by" comment, among the
// file's first lines.
func madeAt(data []byte) (time.Time, bool) {
	for i, line := range strings.SplitN(string(data[:min(len(data), 64<<10)]), "\n", 20) {
		if i == 19 {
			break
		}
		rest, ok := strings.CutPrefix(line, "# benchctl: made by ")
		if !ok {
			continue
		}
		j := strings.LastIndex(rest, " at ")
		if j < 0 {
			return time.Time{}, false
		}
		stamp, _, _ := strings.Cut(rest[j+4:], ";")
		t, err := time.Parse(time.RFC3339, stamp)
		return t, err == nil
	}
	return time.Time{}, false
}

// indexed is what the index takes of one file: read before the
// transaction that writes it, so a large file's parsing holds no lock.
type indexed struct {
	name  string
	info  fileInfo
	pts   []history.FilePoint
	warns []string
}

// read parses a file for the index.
func read(name string, data []byte, uploaded time.Time) indexed {
	pts, warns := history.FilePoints(name, data)
	return indexed{name: name, info: readInfo(data, uploaded), pts: pts, warns: warns}
}

// file indexes stored file fid.
func (ix *indexer) file(ctx context.Context, tx *sql.Tx, fid int64, name string, data []byte, uploaded time.Time) error {
	return ix.write(ctx, tx, fid, read(name, data, uploaded))
}

// write indexes stored file fid, read by read.
func (ix *indexer) write(ctx context.Context, tx *sql.Tx, fid int64, in indexed) error {
	s := ix.s
	fi, name := in.info, in.name
	if fi.machine == "" {
		return fmt.Errorf("%w: %s: no machine-id", ErrInvalid, name)
	}
	at := fi.at.UnixNano()
	facts, _ := json.Marshal(fi.facts)
	var mid int64
	if err := tx.QueryRowContext(ctx, s.q(`INSERT INTO machines (machine_id, first_seen, last_seen, runs, facts) VALUES (?, ?, ?, 1, ?)
		ON CONFLICT (machine_id) DO UPDATE SET
			first_seen = CASE WHEN excluded.first_seen < machines.first_seen THEN excluded.first_seen ELSE machines.first_seen END,
			facts = CASE WHEN excluded.last_seen >= machines.last_seen THEN excluded.facts ELSE machines.facts END,
			last_seen = CASE WHEN excluded.last_seen > machines.last_seen THEN excluded.last_seen ELSE machines.last_seen END,
			runs = machines.runs + 1
		RETURNING id`), fi.machine, at, at, string(facts)).Scan(&mid); err != nil {
		return unavailable("index machine", err)
	}
	pts := in.pts
	ix.warnings = append(ix.warnings, in.warns...)
	var commit, env string
	if len(pts) > 0 {
		commit, env = pts[0].Commit, pts[0].EnvID
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE files SET machine = ?, at = ?, commit_id = ?, env_id = ? WHERE id = ?`), mid, at, commit, env, fid); err != nil {
		return unavailable("index file", err)
	}
	if len(pts) == 0 {
		return nil
	}
	bids, err := ix.benchmarks(ctx, tx, pts)
	if err != nil {
		return err
	}
	sids, err := ix.series(ctx, tx, mid, pts, bids)
	if err != nil {
		return err
	}
	for lo := 0; lo < len(pts); lo += 200 {
		hi := min(lo+200, len(pts))
		// The forks' range from schema 10 on.
		cols, k := "series, at, file, value, n", 5
		if ix.version >= 10 {
			cols, k = cols+", lo, hi", 7
		}
		args := make([]any, 0, k*(hi-lo))
		for i := lo; i < hi; i++ {
			p := pts[i]
			args = append(args, sids[i], at, fid, p.Value, p.N)
			if k == 7 {
				args = append(args, p.Lo, p.Hi)
			}
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO points (`+cols+`) VALUES `+rows(hi-lo, k)), args...); err != nil {
			return unavailable("index points", err)
		}
	}
	return nil
}

// benchmarks returns the benchmark ID of each point, creating the
// benchmarks not seen before with their name keys.
func (ix *indexer) benchmarks(ctx context.Context, tx *sql.Tx, pts []history.FilePoint) ([]int64, error) {
	s := ix.s
	ids := make([]int64, len(pts))
	var missing [][2]string
	seen := map[[2]string]bool{}
	s.mu.Lock()
	for i, p := range pts {
		k := [2]string{p.Pkg, p.Benchmark}
		if id, ok := ix.fresh[k]; ok {
			ids[i] = id
		} else if id, ok := s.bench[k]; ok && ix.cache {
			ids[i] = id
		} else if !seen[k] {
			seen[k] = true
			missing = append(missing, k)
		}
	}
	s.mu.Unlock()
	got := map[[2]string]int64{}
	for lo := 0; lo < len(missing); lo += 200 {
		hi := min(lo+200, len(missing))
		args := make([]any, 0, 3*(hi-lo))
		for _, k := range missing[lo:hi] {
			args = append(args, k[0], k[1], baseName(k[1]))
		}
		rs, err := tx.QueryContext(ctx, s.q(`INSERT INTO benchmarks (pkg, name, base) VALUES `+rows(hi-lo, 3)+`
			ON CONFLICT (pkg, name) DO UPDATE SET base = excluded.base RETURNING id, pkg, name`), args...)
		if err != nil {
			return nil, unavailable("index benchmarks", err)
		}
		for rs.Next() {
			var id int64
			var k [2]string
			if err := rs.Scan(&id, &k[0], &k[1]); err != nil {
				rs.Close()
				return nil, unavailable("index benchmarks", err)
			}
			got[k] = id
		}
		if err := rs.Close(); err != nil {
			return nil, unavailable("index benchmarks", err)
		}
		var largs []any
		n := 0
		for _, k := range missing[lo:hi] {
			for _, kv := range nameKeys(k[1]) {
				largs = append(largs, got[k], kv[0], kv[1])
				n++
			}
		}
		if n > 0 {
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO bench_labels (benchmark, key, value) VALUES `+rows(n, 3)+` ON CONFLICT DO NOTHING`), largs...); err != nil {
				return nil, unavailable("index name keys", err)
			}
		}
	}
	for k, id := range got {
		ix.fresh[k] = id
	}
	for i, p := range pts {
		if ids[i] == 0 {
			ids[i] = ix.fresh[[2]string{p.Pkg, p.Benchmark}]
		}
	}
	return ids, nil
}

// series returns the series ID of each point (of machine mid), creating
// the series not seen before and counting the new point in each.
func (ix *indexer) series(ctx context.Context, tx *sql.Tx, mid int64, pts []history.FilePoint, bids []int64) ([]int64, error) {
	s := ix.s
	type key struct {
		b    int64
		unit string
	}
	got := map[key]int64{}
	created := 0
	bump := ""
	if ix.version >= 3 {
		bump = ", version = series.version + 1"
	}
	for lo := 0; lo < len(pts); lo += 200 {
		hi := min(lo+200, len(pts))
		args := make([]any, 0, 4*(hi-lo))
		for i := lo; i < hi; i++ {
			higher := 0
			if pts[i].HigherIsBetter {
				higher = 1
			}
			args = append(args, mid, bids[i], pts[i].Unit, higher)
		}
		rs, err := tx.QueryContext(ctx, s.q(`INSERT INTO series (machine, benchmark, unit, higher, points) VALUES `+
			strings.ReplaceAll(rows(hi-lo, 4), "?)", "?, 1)")+`
			ON CONFLICT (machine, benchmark, unit) DO UPDATE SET points = series.points + 1`+bump+`
			RETURNING id, benchmark, unit, points`), args...)
		if err != nil {
			return nil, unavailable("index series", err)
		}
		for rs.Next() {
			var id, points int64
			var k key
			if err := rs.Scan(&id, &k.b, &k.unit, &points); err != nil {
				rs.Close()
				return nil, unavailable("index series", err)
			}
			got[k] = id
			if points == 1 {
				created++ // inserted, not updated
			}
		}
		if err := rs.Close(); err != nil {
			return nil, unavailable("index series", err)
		}
	}
	if created > 0 && ix.version >= 11 {
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE machines SET series_count = series_count + ? WHERE id = ?`), created, mid); err != nil {
			return nil, unavailable("index series", err)
		}
	}
	ids := make([]int64, len(pts))
	for i, p := range pts {
		ids[i] = got[key{bids[i], p.Unit}]
	}
	return ids, nil
}

// nameKeys are a benchmark name's key=value parts, as "/key" and value
// (benchfmt's name keys: /impl=paged gives /impl and paged).
func nameKeys(full string) [][2]string {
	var out [][2]string
	parts := strings.Split(strings.TrimPrefix(full, "Benchmark"), "/")
	for i, part := range parts[1:] {
		if i == len(parts)-2 {
			// The -procs suffix of the last part is not part of its value.
			if j := strings.LastIndexByte(part, '-'); j > 0 && isDigits(part[j+1:]) {
				part = part[:j]
			}
		}
		if k, v, ok := strings.Cut(part, "="); ok && k != "" {
			out = append(out, [2]string{"/" + k, v})
		}
	}
	return out
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// baseName is a benchmark's name without its Benchmark prefix, sub-names
// and -procs suffix, as benchfmt's Name.Base gives it.
func baseName(full string) string {
	n := benchfmt.Name(strings.TrimPrefix(full, "Benchmark"))
	return string(n.Base())
}
