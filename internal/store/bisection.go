package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"

	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/internal/payload"
)

// Bisection is what a benchctl bisect of one regression found, as
// nightly --bisect uploads it: a file whose configuration carries
// payload.KeyBisectBad (and payload's other bisect keys) is recorded as a
// bisection of its machine's regression from Good to Bad, not counted as
// a run.
type Bisection struct {
	Machine   string `json:"machine"`
	Benchmark string `json:"benchmark"`
	Unit      string `json:"unit"`
	Good      string `json:"good"`
	Bad       string `json:"bad"`
	// Culprit is the commit found ("" when none was decided), Subject
	// its subject line, Own its change against its parent (with its
	// interval) and Share the part of the whole change it explains (NaN
	// when not measured).
	Culprit string  `json:"culprit"`
	Subject string  `json:"subject"`
	Own     string  `json:"own"`
	Share   float64 `json:"share"`
	// Functions are the functions behind the culprit's own change, with
	// their change per op and share ("" when it was not explained).
	Functions string `json:"functions,omitempty"`
	// Upload and Part name the stored file: its report and raw A/B.
	Upload string `json:"upload"`
	Part   int    `json:"part"`
}

// bisectionOf reads a file's bisection keys: ok when it is one.
func bisectionOf(p parsed) (Bisection, bool) {
	get := func(k string) string {
		for kv := range p.labels {
			if kv[0] == k {
				return kv[1]
			}
		}
		return ""
	}
	b := Bisection{Machine: p.machine, Benchmark: get(payload.KeyBisectBenchmark), Unit: get(payload.KeyBisectUnit),
		Good: get(payload.KeyBisectGood), Bad: get(payload.KeyBisectBad), Culprit: get(payload.KeyBisectCulprit),
		Subject: get(payload.KeyBisectSubject), Own: get(payload.KeyBisectOwn), Functions: get(payload.KeyBisectFunctions), Share: math.NaN()}
	if v, err := strconv.ParseFloat(get(payload.KeyBisectShare), 64); err == nil {
		b.Share = v
	}
	return b, b.Bad != ""
}

// MaxShare bounds a bisection's share of the change: a culprit's own
// change explains a part of the whole (1: all of it), which an interval
// may take somewhat past 0 or 1, never ten times past.
const MaxShare = 10

var commitRE = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// checkBisection refuses a bisection file whose content no page could
// show truthfully: a share of the change that is not a number within
// ±MaxShare, or a culprit that is not a commit hash.
func checkBisection(p parsed) error {
	b, ok := bisectionOf(p)
	if !ok {
		return nil
	}
	for kv := range p.labels {
		if kv[0] == payload.KeyBisectShare {
			if v, err := strconv.ParseFloat(kv[1], 64); err != nil || !(math.Abs(v) <= MaxShare) {
				return fmt.Errorf("%w: %s: %s %q: a share of the change is a number within ±%d", ErrInvalid, p.Name, payload.KeyBisectShare, kv[1], MaxShare)
			}
		}
	}
	if b.Culprit != "" && !commitRE.MatchString(b.Culprit) {
		return fmt.Errorf("%w: %s: %s %q: a culprit is a commit hash (7 to 64 hex digits)", ErrInvalid, p.Name, payload.KeyBisectCulprit, b.Culprit)
	}
	return nil
}

// bisectionWarnings say when a stored bisection will be shown beside
// nothing: its machine has no runs here, or no series of its benchmark
// and unit on that machine has a change point.
func (s *Store) bisectionWarnings(ctx context.Context, tx *sql.Tx, name string, b Bisection) ([]string, error) {
	var runs int
	err := tx.QueryRowContext(ctx, s.q(`SELECT runs FROM machines WHERE machine_id = ?`), b.Machine).Scan(&runs)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, unavailable("bisection's machine", err)
	}
	if runs == 0 {
		return []string{fmt.Sprintf("%s: a bisection for machine %s, which has no runs here: it is shown beside no regression", name, b.Machine)}, nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM changepoints c JOIN series se ON se.id = c.series
		JOIN machines m ON m.id = se.machine JOIN benchmarks bm ON bm.id = se.benchmark
		WHERE m.machine_id = ? AND bm.name = ? AND se.unit = ?`), b.Machine, b.Benchmark, b.Unit).Scan(&n); err != nil {
		return nil, unavailable("bisection's change points", err)
	}
	if n == 0 {
		return []string{fmt.Sprintf("%s: a bisection of %s %s, which has no change point on machine %s: it is shown beside no regression", name, b.Benchmark, b.Unit, b.Machine)}, nil
	}
	return nil, nil
}

func (s *Store) insertBisection(ctx context.Context, tx *sql.Tx, fid int64, b Bisection) error {
	var share sql.NullFloat64
	if !math.IsNaN(b.Share) && !math.IsInf(b.Share, 0) {
		share = sql.NullFloat64{Float64: b.Share, Valid: true}
	}
	cols, args := "file, machine_id, benchmark, unit, good, bad, culprit, subject, own, share", []any{fid, b.Machine, b.Benchmark, b.Unit, b.Good, b.Bad, b.Culprit, b.Subject, b.Own, share}
	if s.schema >= 12 { // the functions behind the culprit
		cols, args = cols+", functions", append(args, b.Functions)
	}
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO bisections (`+cols+`) VALUES `+rows(1, len(args))), args...)
	return err
}

// Bisections lists a machine's bisections, newest first.
func (s *Store) Bisections(ctx context.Context, machine string) ([]Bisection, error) {
	rs, err := s.db.QueryContext(ctx, s.q(`SELECT b.machine_id, b.benchmark, b.unit, b.good, b.bad, b.culprit, b.subject, b.own, b.share, b.functions, f.upload_key, f.part
		FROM bisections b JOIN files f ON f.id = b.file WHERE b.machine_id = ? ORDER BY b.file DESC`), machine)
	if err != nil {
		return nil, unavailable("bisections", err)
	}
	defer rs.Close()
	out := []Bisection{}
	for rs.Next() {
		var b Bisection
		var share sql.NullFloat64
		if err := rs.Scan(&b.Machine, &b.Benchmark, &b.Unit, &b.Good, &b.Bad, &b.Culprit, &b.Subject, &b.Own, &share, &b.Functions, &b.Upload, &b.Part); err != nil {
			return nil, unavailable("bisections", err)
		}
		b.Share = math.NaN()
		if share.Valid {
			b.Share = share.Float64
		}
		out = append(out, b)
	}
	return out, unavailable("bisections", rs.Err())
}

// BisectionsOf is, for each of cps (a machine's change points), the
// newest bisection of it (nil when none was uploaded): its machine's
// benchmark and unit between the same two commits. It reads one
// bisection a change point, whatever the machine holds besides.
func (s *Store) BisectionsOf(ctx context.Context, cps []ChangePoint) ([]*Bisection, error) {
	out := make([]*Bisection, len(cps))
	for i, c := range cps {
		b := Bisection{Machine: c.Machine, Benchmark: c.Benchmark, Unit: c.Unit, Good: c.Before.Commit, Bad: c.After.Commit}
		var share sql.NullFloat64
		err := s.db.QueryRowContext(ctx, s.q(`SELECT b.culprit, b.subject, b.own, b.share, b.functions, f.upload_key, f.part
			FROM bisections b JOIN files f ON f.id = b.file
			WHERE b.machine_id = ? AND b.benchmark = ? AND b.unit = ? AND b.good = ? AND b.bad = ?
			ORDER BY b.file DESC LIMIT 1`), b.Machine, b.Benchmark, b.Unit, b.Good, b.Bad).Scan(&b.Culprit, &b.Subject, &b.Own, &share, &b.Functions, &b.Upload, &b.Part)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, unavailable("bisections", err)
		}
		b.Share = math.NaN()
		if share.Valid {
			b.Share = share.Float64
		}
		out[i] = &b
	}
	return out, nil
}

// reclassifyBisections records as bisections the stored files that carry
// payload.KeyBisectBad and are none yet (uploaded before schema 7, or
// indexed as runs by a server of that time), and rebuilds the index
// without them when there were any.
func reclassifyBisections(ctx context.Context, s *Store, tx *sql.Tx) error {
	found := map[int64]Bisection{}
	var ids []int64
	err := eachStored(ctx, s, tx, `SELECT f.id, f.name, COALESCE((SELECT o.contents FROM files o WHERE o.id = f.same_as), f.contents)
		FROM files f WHERE f.id IN (SELECT file FROM file_labels WHERE name = ?) AND f.id NOT IN (SELECT file FROM bisections) ORDER BY f.id`,
		[]any{payload.KeyBisectBad}, func(id int64, name string, data []byte) {
			if b, ok := bisectionOf(labelsOf(payload.File{Name: name, Data: data})); ok {
				found[id] = b
				ids = append(ids, id)
			}
		})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.insertBisection(ctx, tx, id, found[id]); err != nil {
			return err
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := clearIndex(ctx, s, tx); err != nil {
		return err
	}
	return s.reindexTx(ctx, tx)
}

// labelsOf reads a stored file's configuration and machine, as validate
// does for an upload but without refusing anything: the file was
// accepted when it was stored.
func labelsOf(f payload.File) parsed {
	p := parsed{File: f, labels: map[[2]string]bool{}}
	r := benchfmt.NewReader(bytes.NewReader(f.Data), f.Name)
	for r.Scan() {
		if rec, ok := r.Result().(*benchfmt.Result); ok {
			p.machine = string(rec.GetConfig("machine-id"))
			p.results++
			for _, c := range rec.Config {
				p.labels[[2]string{c.Key, string(c.Value)}] = true
			}
		}
	}
	return p
}
