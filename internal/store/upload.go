package store

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/internal/payload"
)

// Upload is what a stored upload's caller learns.
type Upload struct {
	ID      string   // the upload's ID: a prefix of its content hash
	FileIDs []string // ID/part, one per file
	Results int      // result lines
	// Machines are the machine-ids of the files, in order, without repeats.
	Machines []string
	// Existing reports that these exact files were already stored, by an
	// earlier upload with this ID: nothing was written.
	Existing bool
	// Warnings are what the index left out of the series, and why.
	Warnings []string
}

// ErrInvalid marks an upload refused for its content: nothing was stored.
var ErrInvalid = errors.New("invalid upload")

// parsed is one validated file.
type parsed struct {
	payload.File
	labels  map[[2]string]bool // config key/value pairs seen
	machine string
	results int
	// hash and deflated are the file's SHA-256 and its stored contents,
	// made before the upload's transaction.
	hash     string
	deflated []byte
}

// prepare hashes and compresses the file for insertFile.
func (p *parsed) prepare() {
	p.hash = dataHash(p.Data)
	p.deflated = deflate(p.Data)
}

// validate reads every file whole: any syntax error, a result without a
// machine-id, two machine-ids in one file or a file without results
// refuses the upload.
func validate(files []payload.File) ([]parsed, error) {
	switch {
	case len(files) == 0:
		return nil, fmt.Errorf("%w: no files", ErrInvalid)
	case len(files) > MaxFiles:
		return nil, fmt.Errorf("%w: %d files in one upload: at most %d (split it)", ErrInvalid, len(files), MaxFiles)
	}
	out := make([]parsed, 0, len(files))
	bisections := map[string]int{} // by machine
	names := map[string]bool{}     // benchmarks of the whole upload
	for _, f := range files {
		if err := text(f); err != nil {
			return nil, err
		}
		p := parsed{File: f, labels: map[[2]string]bool{}}
		r := benchfmt.NewReader(bytes.NewReader(f.Data), f.Name)
		for r.Scan() {
			switch rec := r.Result().(type) {
			case *benchfmt.SyntaxError:
				return nil, fmt.Errorf("%w: %v", ErrInvalid, rec)
			case *benchfmt.Result:
				if err := bounded(f.Name, rec, names); err != nil {
					return nil, err
				}
				m := string(rec.GetConfig("machine-id"))
				if m == "" {
					_, line := rec.Pos()
					return nil, fmt.Errorf("%w: %s:%d: result without a machine-id configuration line (benchctl writes one; for other tools' files add a \"machine-id: NAME\" line)", ErrInvalid, f.Name, line)
				}
				if p.machine != "" && m != p.machine {
					return nil, fmt.Errorf("%w: %s: two machine-ids (%s and %s) in one file", ErrInvalid, f.Name, p.machine, m)
				}
				p.machine = m
				p.results++
				for _, c := range rec.Config {
					p.labels[[2]string{c.Key, string(c.Value)}] = true
				}
			}
		}
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, f.Name, err)
		}
		if p.results == 0 {
			return nil, fmt.Errorf("%w: %s: no benchmark results", ErrInvalid, f.Name)
		}
		if err := checkBisection(p); err != nil {
			return nil, err
		}
		if _, ok := bisectionOf(p); ok {
			if bisections[p.machine]++; bisections[p.machine] > MaxBisections {
				return nil, fmt.Errorf("%w: %s: more than %d bisections of machine %s in one upload", ErrInvalid, p.Name, MaxBisections, p.machine)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// Limits of an upload's content, beyond the server's limit on its size:
// what one upload may make every page that lists it carry.
const (
	MaxFileName   = 255    // bytes of a file's name
	MaxName       = 1024   // bytes of a benchmark's name, a configuration key or value
	MaxBenchmarks = 20_000 // distinct benchmark names in one upload
	MaxFiles      = 1_000  // files in one upload
	// MaxBisections is the most bisections of one machine in one
	// upload: a night's bisections are one a regression.
	MaxBisections = 100
)

// text refuses a file that is not text: a NUL byte, invalid UTF-8 (which
// PostgreSQL cannot store and SQLite would store as given), or a name
// that is too long or holds a control character or a bidirectional
// control (U+202E shows "gpj.exe" as "exe.jpg" on every page that lists
// it).
func text(f payload.File) error {
	switch {
	case len(f.Name) > MaxFileName:
		return fmt.Errorf("%w: a file name of %d bytes: at most %d", ErrInvalid, len(f.Name), MaxFileName)
	case !utf8.ValidString(f.Name) || strings.ContainsFunc(f.Name, unicode.IsControl):
		return fmt.Errorf("%w: file name %q: want UTF-8 text without control characters", ErrInvalid, f.Name)
	case strings.ContainsFunc(f.Name, bidiControl):
		return fmt.Errorf("%w: file name %q: holds a bidirectional control character, which would show the name reordered", ErrInvalid, f.Name)
	}
	if i := bytes.IndexByte(f.Data, 0); i >= 0 {
		return fmt.Errorf("%w: %s: a NUL byte at offset %d: a results file is text", ErrInvalid, f.Name, i)
	}
	if !utf8.Valid(f.Data) {
		return fmt.Errorf("%w: %s: not valid UTF-8", ErrInvalid, f.Name)
	}
	return nil
}

// bounded refuses a result whose name or configuration is over MaxName,
// or the result that takes the upload past MaxBenchmarks names.
func bounded(file string, rec *benchfmt.Result, names map[string]bool) error {
	_, line := rec.Pos()
	if len(rec.Name) > MaxName {
		return fmt.Errorf("%w: %s:%d: a benchmark name of %d bytes: at most %d", ErrInvalid, file, line, len(rec.Name), MaxName)
	}
	if bytes.ContainsFunc(rec.Name, bidiControl) {
		return fmt.Errorf("%w: %s:%d: benchmark name %q holds a bidirectional control character, which would show it reordered", ErrInvalid, file, line, rec.Name)
	}
	for _, c := range rec.Config {
		if len(c.Key) > MaxName || len(c.Value) > MaxName {
			return fmt.Errorf("%w: %s:%d: configuration %.40q… over %d bytes", ErrInvalid, file, line, c.Key, MaxName)
		}
	}
	for _, v := range rec.Values {
		// The series hold times and throughputs, on a log scale: one
		// that is not a positive number would be left out of them.
		// (benchfmt leaves 0 and ±Inf ns/op untidied.)
		_, tidy := benchunit.Tidy(1, v.Unit)
		if history.SeriesUnit(tidy) && !(v.Value > 0 && !math.IsInf(v.Value, 1)) {
			val, unit := v.Value, v.Unit
			if v.OrigUnit != "" {
				val, unit = v.OrigValue, v.OrigUnit
			}
			return fmt.Errorf("%w: %s:%d: %g %s: a time or throughput is a positive number", ErrInvalid, file, line, val, unit)
		}
	}
	if !names[string(rec.Name)] {
		if len(names) == MaxBenchmarks {
			return fmt.Errorf("%w: %s:%d: more than %d benchmarks in one upload: split it", ErrInvalid, file, line, MaxBenchmarks)
		}
		names[string(rec.Name)] = true
	}
	return nil
}

// ErrForbidden marks an upload of a machine its uploader may not upload
// for: nothing was stored.
var ErrForbidden = errors.New("forbidden")

// parseUpload validates files, uploaded by user for machines (any when
// none), and sums up the upload they make, with their content hash.
func parseUpload(files []payload.File, user string, machines []string) ([]parsed, *Upload, string, error) {
	ps, err := validate(files)
	if err != nil {
		return nil, nil, "", err
	}
	if err := uploadsFor(ps, user, machines); err != nil {
		return nil, nil, "", err
	}
	hash := payload.HashFiles(files)
	up := &Upload{ID: hash[:16]}
	for i, p := range ps {
		up.FileIDs = append(up.FileIDs, fmt.Sprintf("%s/%d", up.ID, i))
		up.Results += p.results
		if !slices.Contains(up.Machines, p.machine) {
			up.Machines = append(up.Machines, p.machine)
		}
	}
	return ps, up, hash, nil
}

// uploadsFor refuses files of a machine that is not among machines (when
// there are any): user's token uploads for those only.
func uploadsFor(ps []parsed, user string, machines []string) error {
	for _, p := range ps {
		if len(machines) > 0 && !slices.Contains(machines, p.machine) {
			return fmt.Errorf("%w: %s is of machine %s; %s's token uploads for %s only", ErrForbidden, p.Name, p.machine, user, strings.Join(machines, ", "))
		}
	}
	return nil
}

// Put stores an upload of files by user (empty when anonymous), all or
// nothing. The same files uploaded again return the first upload with
// Existing set. With machines, a file of any other machine-id refuses
// the upload (ErrForbidden).
func (s *Store) Put(ctx context.Context, files []payload.File, user string, machines ...string) (*Upload, error) {
	ps, up, hash, err := parseUpload(files, user, machines)
	if err != nil {
		return nil, err
	}
	if err := s.checkFile(); err != nil {
		return nil, err
	}
	if ok, err := s.exists(ctx, hash); err != nil || ok {
		up.Existing = ok
		return up, err
	}
	// Parsed, hashed and compressed before the transaction: it holds the
	// write lock only for the writes (compressing in it doubled the time
	// a 1,000-file upload held SQLite's).
	created := time.Now().UTC()
	reads := prepareAll(ps, created)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, unavailable("begin", err)
	}
	defer tx.Rollback()
	var pk int64
	err = tx.QueryRowContext(ctx, s.q(`INSERT INTO uploads (upload_id, content_hash, created, by_user, files, results)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`),
		up.ID, hash, created.UnixNano(), user, len(ps), up.Results).Scan(&pk)
	if errors.Is(err, sql.ErrNoRows) {
		// A concurrent upload of the same files committed first.
		up.Existing = true
		return up, nil
	}
	if err != nil {
		return nil, unavailable("insert upload", err)
	}
	ix := newIndexer(s, SchemaVersion, true)
	if err := s.putFiles(ctx, tx, ix, pk, up, ps, reads, created, user); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE files SET upload_key = ? WHERE upload = ?`), up.ID, pk); err != nil {
		return nil, unavailable("insert file", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, unavailable("commit", err)
	}
	// Committed to a file that was removed or replaced meanwhile is not
	// stored: the client must keep it.
	if err := s.checkFile(); err != nil {
		return nil, err
	}
	ix.committed()
	up.Warnings = ix.warnings
	return up, nil
}

// prepareAll reads each file's index and prepares it for insertFile,
// on every CPU.
func prepareAll(ps []parsed, created time.Time) []indexed {
	reads := make([]indexed, len(ps))
	var wg sync.WaitGroup
	work := make(chan int)
	for range min(runtime.GOMAXPROCS(0), len(ps)) {
		wg.Go(func() {
			for i := range work {
				reads[i] = read(ps[i].Name, ps[i].Data, created)
				ps[i].prepare()
			}
		})
	}
	for i := range ps {
		work <- i
	}
	close(work)
	wg.Wait()
	return reads
}

func (s *Store) exists(ctx context.Context, hash string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM uploads WHERE content_hash = ?`), hash).Scan(&n)
	return n > 0, unavailable("look up upload", err)
}

// insertFile writes a file's raw contents (deflated) and its labels: the
// configuration pairs it contains and the server's own (empty ones left
// out). A file whose bytes are stored already, as file sameAs, keeps no
// contents of its own: it points at that file's.
func (s *Store) insertFile(ctx context.Context, tx *sql.Tx, upload int64, part int, p parsed, sameAs int64, server map[string]string) (int64, [][2]string, error) {
	contents := []byte{}
	if sameAs == 0 {
		contents = p.deflated
	}
	// One statement a file: its hash and the file it shares bytes with
	// in the row itself.
	cols, args := "upload, part, name, contents, size, results", []any{upload, part, p.Name, contents, len(p.Data), p.results}
	if s.schema >= 5 {
		cols, args = cols+", data_hash", append(args, p.hash)
	}
	if sameAs != 0 {
		cols, args = cols+", same_as", append(args, sameAs)
	}
	var fid int64
	if err := tx.QueryRowContext(ctx, s.q(`INSERT INTO files (`+cols+`) VALUES `+rows(1, len(args))+` RETURNING id`), args...).Scan(&fid); err != nil {
		return 0, nil, err
	}
	for k, v := range server {
		if v != "" {
			p.labels[[2]string{k, v}] = true
		}
	}
	pairs := make([][2]string, 0, len(p.labels))
	for kv := range p.labels {
		pairs = append(pairs, kv)
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0]+"\x00"+pairs[i][1] < pairs[j][0]+"\x00"+pairs[j][1] })
	if err := s.insertLabels(ctx, tx, "file_labels (file, name, value)", fid, pairs); err != nil {
		return 0, nil, err
	}
	return fid, pairs, nil
}

// insertLabels writes name=value pairs of one file or upload, id, into
// table (its columns named).
func (s *Store) insertLabels(ctx context.Context, tx *sql.Tx, table string, id int64, pairs [][2]string) error {
	for len(pairs) > 0 {
		n := min(len(pairs), 300)
		args := make([]any, 0, 3*n)
		for _, kv := range pairs[:n] {
			args = append(args, id, kv[0], kv[1])
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO `+table+` VALUES `+rows(n, 3)), args...); err != nil {
			return err
		}
		pairs = pairs[n:]
	}
	return nil
}

// uploadLabels gathers an upload's first values of each label
// (MaxLabelValues at most, in byte order): what a list of uploads shows.
type uploadLabels map[string][]string

func (u uploadLabels) add(pairs [][2]string) {
	for _, kv := range pairs {
		u[kv[0]] = append(u[kv[0]], kv[1])
		if len(u[kv[0]]) > 4*MaxLabelValues {
			u[kv[0]] = firstValues(u[kv[0]])
		}
	}
}

func (u uploadLabels) pairs() [][2]string {
	var out [][2]string
	for _, name := range slices.Sorted(maps.Keys(u)) {
		for _, v := range firstValues(u[name]) {
			out = append(out, [2]string{name, v})
		}
	}
	return out
}

// rows spells n rows of k placeholders: (?, ?), (?, ?), …
func rows(n, k int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", k), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// putFiles stores upload pk's files with their labels, in tx, and
// indexes each one not stored before.
func (s *Store) putFiles(ctx context.Context, tx *sql.Tx, ix *indexer, pk int64, up *Upload, ps []parsed, reads []indexed, created time.Time, user string) error {
	labels := uploadLabels{}
	for i, p := range ps {
		// The same bytes stored before (under another name, in another
		// upload) are one run: stored once, not counted again.
		var was string
		var wasPart int
		var wasID int64
		if s.schema >= 5 {
			err := tx.QueryRowContext(ctx, s.q(`SELECT f.id, u.upload_id, f.part FROM files f JOIN uploads u ON u.id = f.upload
				WHERE f.data_hash = ? ORDER BY f.id LIMIT 1`), p.hash).Scan(&wasID, &was, &wasPart)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return unavailable("look up file", err)
			}
		}
		sameAs := wasID
		if s.schema < 6 {
			sameAs = 0
		}
		fid, pairs, err := s.insertFile(ctx, tx, pk, i, p, sameAs, map[string]string{
			"upload": up.ID, "upload-part": up.FileIDs[i], "upload-file": p.Name,
			"upload-time": created.Format(time.RFC3339), "by": user})
		if err != nil {
			return unavailable("insert file", err)
		}
		labels.add(pairs)
		if was != "" {
			ix.warnings = append(ix.warnings, fmt.Sprintf("%s: the same bytes as %s/%d: stored once, not counted again in the series", p.Name, was, wasPart))
			continue
		}
		if b, ok := bisectionOf(p); ok && s.schema >= 7 {
			if err := s.insertBisection(ctx, tx, fid, b); err != nil {
				return unavailable("insert bisection", err)
			}
			warns, err := s.bisectionWarnings(ctx, tx, p.Name, b)
			if err != nil {
				return err
			}
			ix.warnings = append(ix.warnings, warns...)
			continue
		}
		if err := ix.write(ctx, tx, fid, reads[i]); err != nil {
			return err
		}
	}
	if s.schema < 11 {
		return nil
	}
	return unavailable("insert upload labels", s.insertLabels(ctx, tx, "upload_labels (upload, name, value)", pk, labels.pairs()))
}

// dataHash is a file's SHA-256, in hex.
func dataHash(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// deflate compresses a file's contents as they are stored.
func deflate(data []byte) []byte {
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.DefaultCompression)
	w.Write(data)
	w.Close()
	return z.Bytes()
}

// inflate reads a stored file's contents back.
func inflate(z []byte) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(z))
	defer r.Close()
	return io.ReadAll(r)
}

// bidiControl reports the characters that reorder the text around them
// (Unicode's Bidi_Control: U+061C, U+200E–U+200F, U+202A–U+202E,
// U+2066–U+2069).
func bidiControl(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }
