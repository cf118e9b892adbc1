package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// AnalysisWindow is how many of a series' latest points its change
// points are computed over: E-divisive costs the square of the points,
// and a regression is news within the last history.NewWindow of them.
const AnalysisWindow = 120

// Machine is one machine that uploaded results, with the configuration
// of its latest run (cpu, goos, goarch, env-id, …).
type Machine struct {
	ID        string            `json:"id"`
	FirstSeen time.Time         `json:"firstSeen"`
	LastSeen  time.Time         `json:"lastSeen"`
	Runs      int               `json:"runs"`
	Facts     map[string]string `json:"facts"`
	Series    int               `json:"series"` // series of time or throughput
	Open      int               `json:"open"`   // open regressions
}

// Machines lists the machines, by machine-id.
func (s *Store) Machines(ctx context.Context) ([]Machine, error) {
	counts := `m.series_count, m.open_count`
	if s.schema < 11 {
		counts = `(SELECT COUNT(*) FROM series s WHERE s.machine = m.id),
			(SELECT COUNT(*) FROM changepoints c JOIN series s ON s.id = c.series WHERE s.machine = m.id AND c.open = 1)`
	}
	rs, err := s.db.QueryContext(ctx, `SELECT m.machine_id, m.first_seen, m.last_seen, m.runs, m.facts, `+counts+`
		FROM machines m ORDER BY m.machine_id`)
	if err != nil {
		return nil, unavailable("machines", err)
	}
	defer rs.Close()
	var out []Machine
	for rs.Next() {
		var m Machine
		var first, last int64
		var facts string
		if err := rs.Scan(&m.ID, &first, &last, &m.Runs, &facts, &m.Series, &m.Open); err != nil {
			return nil, unavailable("machines", err)
		}
		m.FirstSeen, m.LastSeen = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
		json.Unmarshal([]byte(facts), &m.Facts)
		out = append(out, m)
	}
	return out, unavailable("machines", rs.Err())
}

// SeriesKey names one series: a benchmark (of a package) and unit on a
// machine.
type SeriesKey struct {
	Machine   string `json:"machine"`
	Pkg       string `json:"pkg"`
	Benchmark string `json:"benchmark"`
	Unit      string `json:"unit"`
}

// Run names one stored file: the run a point came from.
type Run struct {
	Upload string    `json:"upload"`
	Part   int       `json:"part"`
	Commit string    `json:"commit"`
	EnvID  string    `json:"envID"`
	At     time.Time `json:"at"`
}

// SeriesPoint is one run's value of a series: the median of its forks.
type SeriesPoint struct {
	Run
	Value float64 `json:"value"`
	N     int     `json:"n"`
	// Lo and Hi are the range of the run's forks; both 0 for a run
	// stored before schema 10, which kept only the median.
	Lo   float64 `json:"lo,omitempty"`
	Hi   float64 `json:"hi,omitempty"`
	file int64
}

// Series is a series' points, oldest first, with its change points.
type Series struct {
	SeriesKey
	HigherIsBetter bool          `json:"higherIsBetter"`
	Points         []SeriesPoint `json:"points"`
	ChangePoints   []ChangePoint `json:"changePoints"`
	Pending        bool          `json:"pending"` // new points not analyzed yet
}

// ChangePoint is a shift of a series between two runs.
type ChangePoint struct {
	SeriesKey
	Before Run `json:"before"`
	After  Run `json:"after"`
	// BeforeValue and AfterValue are the medians of the segments on
	// either side; Change is their relative change in percent; Noise the
	// series' robust noise in its unit.
	BeforeValue float64 `json:"beforeValue"`
	AfterValue  float64 `json:"afterValue"`
	Change      float64 `json:"change"`
	Noise       float64 `json:"noise"`
	Worse       bool    `json:"worse"`
	Small       bool    `json:"small"`      // under history's MinEffect × noise: annotated only
	EnvChanged  bool    `json:"envChanged"` // at an env-id change: annotated only
	Open        bool    `json:"open"`       // a regression: worse, new among the latest runs or still standing
	// RunsSince is the series' runs from the first after the shift to
	// the latest.
	RunsSince int `json:"runsSince"`

	series int64
}

func (s *Store) seriesID(ctx context.Context, k SeriesKey) (int64, bool, error) {
	rs, err := s.db.QueryContext(ctx, s.q(`SELECT s.id, s.higher, b.pkg FROM series s JOIN machines m ON m.id = s.machine JOIN benchmarks b ON b.id = s.benchmark
		WHERE m.machine_id = ? AND b.name = ? AND s.unit = ? AND (b.pkg = ? OR ? = '')`), k.Machine, k.Benchmark, k.Unit, k.Pkg, k.Pkg)
	if err != nil {
		return 0, false, unavailable("series", err)
	}
	defer rs.Close()
	var id int64
	var higher, n int
	var pkgs []string
	for rs.Next() {
		var pkg string
		if err := rs.Scan(&id, &higher, &pkg); err != nil {
			return 0, false, unavailable("series", err)
		}
		pkgs = append(pkgs, pkg)
		n++
	}
	switch {
	case n == 0:
		return 0, false, fmt.Errorf("%w: no series %s %s on machine %s", ErrNotFound, k.Benchmark, k.Unit, k.Machine)
	case n > 1:
		return 0, false, fmt.Errorf("%w: %s is in packages %v: name one (pkg)", ErrQuery, k.Benchmark, pkgs)
	}
	return id, higher == 1, nil
}

// Series reads one series, oldest point first, with its stored change
// points.
func (s *Store) Series(ctx context.Context, k SeriesKey) (*Series, error) {
	id, higher, err := s.seriesID(ctx, k)
	if err != nil {
		return nil, err
	}
	out := &Series{SeriesKey: k, HigherIsBetter: higher}
	if out.Points, err = s.points(ctx, id, 0); err != nil {
		return nil, err
	}
	var version, analyzed int64
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT b.pkg, s.version, s.analyzed FROM series s JOIN benchmarks b ON b.id = s.benchmark WHERE s.id = ?`), id).
		Scan(&out.Pkg, &version, &analyzed); err != nil {
		return nil, unavailable("series", err)
	}
	out.Pending = analyzed < version
	out.ChangePoints, err = s.changePoints(ctx, `c.series = ?`, []any{id}, 0)
	return out, err
}

// points reads a series' points, oldest first: the latest last of them
// when last > 0. The points come from one range of the points table; the
// runs they name are then read by file ID (a join over every run would
// make PostgreSQL hash the whole files table).
func (s *Store) points(ctx context.Context, id int64, last int) ([]SeriesPoint, error) {
	q := `SELECT p.file, p.at, p.value, p.n, COALESCE(p.lo, 0), COALESCE(p.hi, 0) FROM points p WHERE p.series = ?`
	if last > 0 {
		q += fmt.Sprintf(` ORDER BY p.at DESC, p.file DESC LIMIT %d`, last)
	} else {
		q += ` ORDER BY p.at, p.file`
	}
	rs, err := s.db.QueryContext(ctx, s.q(q), id)
	if err != nil {
		return nil, unavailable("points", err)
	}
	var out []SeriesPoint
	for rs.Next() {
		var p SeriesPoint
		var at int64
		if err := rs.Scan(&p.file, &at, &p.Value, &p.N, &p.Lo, &p.Hi); err != nil {
			rs.Close()
			return nil, unavailable("points", err)
		}
		p.At = time.Unix(0, at).UTC()
		out = append(out, p)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, unavailable("points", err)
	}
	if last > 0 {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	runs, err := s.runs(ctx, id, out)
	if err != nil {
		return nil, err
	}
	for i := range out {
		r := runs[out[i].file]
		r.At = out[i].At
		out[i].Run = r
	}
	return out, nil
}

// maxListedRuns is the most runs SQLite reads by a list of their IDs;
// more are read by their series.
const maxListedRuns = 500

// runs reads the runs of points by file ID.
func (s *Store) runs(ctx context.Context, series int64, pts []SeriesPoint) (map[int64]Run, error) {
	const cols = `SELECT f.id, COALESCE(f.upload_key, ''), f.part, COALESCE(f.commit_id, ''), COALESCE(f.env_id, '') FROM files f WHERE `
	var rs *sql.Rows
	var err error
	if s.dialect == postgres {
		ids := make([]int64, len(pts))
		for i, p := range pts {
			ids[i] = p.file
		}
		rs, err = s.db.QueryContext(ctx, cols+`f.id = ANY($1)`, ids)
	} else if len(pts) <= maxListedRuns {
		// The points' own files: a series' latest few (a small chart's)
		// do not read the runs of all its points.
		ids := make([]any, len(pts))
		for i, p := range pts {
			ids[i] = p.file
		}
		rs, err = s.db.QueryContext(ctx, cols+`f.id IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")+`)`, ids...)
	} else {
		rs, err = s.db.QueryContext(ctx, cols+`f.id IN (SELECT p.file FROM points p WHERE p.series = ?)`, series)
	}
	if err != nil {
		return nil, unavailable("runs", err)
	}
	defer rs.Close()
	out := make(map[int64]Run, len(pts))
	for rs.Next() {
		var id int64
		var r Run
		if err := rs.Scan(&id, &r.Upload, &r.Part, &r.Commit, &r.EnvID); err != nil {
			return nil, unavailable("runs", err)
		}
		out[id] = r
	}
	return out, unavailable("runs", rs.Err())
}

func (s *Store) changePoints(ctx context.Context, where string, args []any, limit int) ([]ChangePoint, error) {
	q := `SELECT m.machine_id, b.pkg, b.name, s.unit, c.before_value, c.after_value, c.noise, c.worse, c.small, c.env_changed, c.open,
			ub.upload_id, fb.part, COALESCE(fb.commit_id, ''), COALESCE(fb.env_id, ''), fb.at,
			ua.upload_id, fa.part, COALESCE(fa.commit_id, ''), COALESCE(fa.env_id, ''), fa.at,
			c.series, (SELECT COUNT(*) FROM points p WHERE p.series = c.series AND p.at >= fa.at)
		FROM changepoints c JOIN series s ON s.id = c.series JOIN machines m ON m.id = s.machine JOIN benchmarks b ON b.id = s.benchmark
		JOIN files fb ON fb.id = c.file_before JOIN uploads ub ON ub.id = fb.upload
		JOIN files fa ON fa.id = c.file_after JOIN uploads ua ON ua.id = fa.upload
		WHERE ` + where + ` ORDER BY c.open DESC, c.worse DESC, c.small, c.at DESC, b.name, s.unit`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rs, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return nil, unavailable("change points", err)
	}
	defer rs.Close()
	var out []ChangePoint
	for rs.Next() {
		var c ChangePoint
		var worse, small, env, open int
		var bat, aat int64
		if err := rs.Scan(&c.Machine, &c.Pkg, &c.Benchmark, &c.Unit, &c.BeforeValue, &c.AfterValue, &c.Noise, &worse, &small, &env, &open,
			&c.Before.Upload, &c.Before.Part, &c.Before.Commit, &c.Before.EnvID, &bat,
			&c.After.Upload, &c.After.Part, &c.After.Commit, &c.After.EnvID, &aat, &c.series, &c.RunsSince); err != nil {
			return nil, unavailable("change points", err)
		}
		c.Worse, c.Small, c.EnvChanged, c.Open = worse == 1, small == 1, env == 1, open == 1
		c.Before.At, c.After.At = time.Unix(0, bat).UTC(), time.Unix(0, aat).UTC()
		c.Change = 100 * (c.AfterValue/c.BeforeValue - 1)
		out = append(out, c)
	}
	return out, unavailable("change points", rs.Err())
}

// Recent reads the latest n points of each change point's series,
// oldest first (a query or two each: callers bound the change points).
func (s *Store) Recent(ctx context.Context, cps []ChangePoint, n int) ([][]SeriesPoint, error) {
	out := make([][]SeriesPoint, len(cps))
	for i, c := range cps {
		pts, err := s.points(ctx, c.series, n)
		if err != nil {
			return nil, err
		}
		out[i] = pts
	}
	return out, nil
}

// OpenRegressions lists the open regressions of every machine, of
// package pkg when it is not empty and shifted at or after since when it
// is not zero, newest first, at most limit.
func (s *Store) OpenRegressions(ctx context.Context, pkg string, since time.Time, limit int) ([]ChangePoint, error) {
	where, args := `c.open = 1`, []any{}
	if pkg != "" {
		where, args = where+` AND b.pkg = ?`, append(args, pkg)
	}
	if !since.IsZero() {
		// Times are stored in Unix nanoseconds, which end in 2262.
		if last := time.Unix(0, math.MaxInt64); since.After(last) {
			since = last
		}
		where, args = where+` AND fa.at >= ?`, append(args, since.UnixNano())
	}
	return s.changePoints(ctx, where, args, limit)
}

// Regressions lists a machine's change points: open regressions first,
// then the other worse shifts, then the rest, newest first within each.
func (s *Store) Regressions(ctx context.Context, machine string, limit int) ([]ChangePoint, error) {
	return s.changePoints(ctx, `m.machine_id = ?`, []any{machine}, limit)
}

// SeriesSummary is one series of a machine with its latest value.
type SeriesSummary struct {
	SeriesKey
	Points  int     `json:"points"`
	Latest  float64 `json:"latest"`
	Open    bool    `json:"open"`
	Pending bool    `json:"pending"`
}

// MachineSeries lists a machine's series, by package, benchmark and unit.
func (s *Store) MachineSeries(ctx context.Context, machine string) ([]SeriesSummary, error) {
	return s.summaries(ctx, `m.machine_id = ?`, machine)
}

// Across lists one benchmark's series on every machine that ran it,
// whatever its GOMAXPROCS suffix: BenchmarkKernel-2 on a 2-CPU machine
// and BenchmarkKernel-8 on an 8-CPU one are the same benchmark (a suffix
// on benchmark itself is ignored).
func (s *Store) Across(ctx context.Context, pkg, benchmark, unit string) ([]SeriesSummary, error) {
	base := result.TrimProcs(benchmark)
	xs, err := s.summaries(ctx, `(b.name = ? OR b.name LIKE ?) AND s.unit = ? AND (b.pkg = ? OR ? = '')`, base, base+"-%", unit, pkg, pkg)
	if err != nil {
		return nil, err
	}
	out := xs[:0]
	for _, x := range xs {
		if result.TrimProcs(x.Benchmark) == base { // LIKE's _ and % match more
			out = append(out, x)
		}
	}
	return out, nil
}

// MachineSeriesPage is one page of a machine's series, those with an
// open regression first: at most limit of them from offset, with how
// many the machine has and how many are pending analysis.
func (s *Store) MachineSeriesPage(ctx context.Context, machine string, offset, limit int) (page []SeriesSummary, total, pending int, err error) {
	err = s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*), COALESCE(SUM(CASE WHEN s.version > s.analyzed THEN 1 ELSE 0 END), 0)
		FROM series s JOIN machines m ON m.id = s.machine WHERE m.machine_id = ?`), machine).Scan(&total, &pending)
	if err != nil {
		return nil, 0, 0, unavailable("series", err)
	}
	page, err = s.summariesOrdered(ctx, `m.machine_id = ?`, `has_open DESC, b.pkg, b.name, s.unit LIMIT ? OFFSET ?`, machine, limit, offset)
	return page, total, pending, err
}

func (s *Store) summaries(ctx context.Context, where string, args ...any) ([]SeriesSummary, error) {
	return s.summariesOrdered(ctx, where, `m.machine_id, b.pkg, b.name, s.unit`, args...)
}

// summariesOrdered are the series where where holds, in order (which may
// end with LIMIT and OFFSET, whose arguments follow where's).
func (s *Store) summariesOrdered(ctx context.Context, where, order string, args ...any) ([]SeriesSummary, error) {
	rs, err := s.db.QueryContext(ctx, s.q(`SELECT m.machine_id, b.pkg, b.name, s.unit, s.points, s.version > s.analyzed,
		(SELECT p.value FROM points p WHERE p.series = s.id ORDER BY p.at DESC LIMIT 1),
		EXISTS (SELECT 1 FROM changepoints c WHERE c.series = s.id AND c.open = 1) AS has_open
		FROM series s JOIN machines m ON m.id = s.machine JOIN benchmarks b ON b.id = s.benchmark
		WHERE `+where+` ORDER BY `+order), args...)
	if err != nil {
		return nil, unavailable("series", err)
	}
	defer rs.Close()
	var out []SeriesSummary
	for rs.Next() {
		var x SeriesSummary
		var latest sql.NullFloat64
		if err := rs.Scan(&x.Machine, &x.Pkg, &x.Benchmark, &x.Unit, &x.Points, &x.Pending, &latest, &x.Open); err != nil {
			return nil, unavailable("series", err)
		}
		x.Latest = latest.Float64
		out = append(out, x)
	}
	return out, unavailable("series", rs.Err())
}

// Analyze computes the change points of every series (of machine, or of
// all machines when empty) with points not analyzed yet, each series in
// its own transaction, and returns how many it analyzed.
func (s *Store) Analyze(ctx context.Context, machine string) (int, error) {
	rs, err := s.db.QueryContext(ctx, s.q(`SELECT s.id, s.version, s.higher FROM series s JOIN machines m ON m.id = s.machine
		WHERE s.analyzed < s.version AND (m.machine_id = ? OR ? = '') ORDER BY s.id`), machine, machine)
	if err != nil {
		return 0, unavailable("analyze", err)
	}
	type job struct {
		id, version int64
		higher      bool
	}
	var jobs []job
	for rs.Next() {
		var j job
		if err := rs.Scan(&j.id, &j.version, &j.higher); err != nil {
			rs.Close()
			return 0, unavailable("analyze", err)
		}
		jobs = append(jobs, j)
	}
	rs.Close()
	workers := min(runtime.GOMAXPROCS(0), 4)
	if s.dialect == sqlite {
		workers = min(workers, 2)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		done  int
		next  = make(chan job)
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				err := s.analyzeSeries(ctx, j.id, j.version, j.higher)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if err == nil {
					done++
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return done, first
}

func (s *Store) analyzeSeries(ctx context.Context, id, version int64, higher bool) error {
	pts, err := s.points(ctx, id, AnalysisWindow)
	if err != nil {
		return err
	}
	hs := &history.Series{HigherIsBetter: higher}
	for _, p := range pts {
		hs.Points = append(hs.Points, history.Point{Commit: p.Commit, EnvID: p.EnvID, Value: p.Value, N: p.N})
	}
	shifts := history.Analyze(hs, history.CPDOptions{Seed: uint64(id)})
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return unavailable("analyze", err)
	}
	defer tx.Rollback()
	// The machine's count of open regressions follows the rows each
	// statement changed, so it holds however analyses interleave.
	var opened int64
	rs, err := tx.QueryContext(ctx, s.q(`DELETE FROM changepoints WHERE series = ? RETURNING open`), id)
	if err != nil {
		return unavailable("analyze", err)
	}
	for rs.Next() {
		var open int
		if err := rs.Scan(&open); err != nil {
			rs.Close()
			return unavailable("analyze", err)
		}
		opened -= int64(open)
	}
	if err := rs.Close(); err != nil {
		return unavailable("analyze", err)
	}
	for _, sh := range shifts {
		if sh.Index <= 0 || sh.Index >= len(pts) || math.IsNaN(sh.Before) || sh.Before == 0 {
			continue
		}
		open := sh.New || sh.Standing
		r, err := tx.ExecContext(ctx, s.q(`INSERT INTO changepoints (series, at, file_before, file_after, before_value, after_value, noise, worse, small, env_changed, open)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`),
			id, pts[sh.Index].At.UnixNano(), pts[sh.Index-1].file, pts[sh.Index].file, sh.Before, sh.After, sh.Noise,
			b2i(sh.Worse), b2i(sh.Small), b2i(sh.EnvChanged), b2i(open))
		if err != nil {
			return unavailable("analyze", err)
		}
		if n, _ := r.RowsAffected(); open {
			opened += n
		}
	}
	if opened != 0 && s.schema >= 11 {
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE machines SET open_count = open_count + ? WHERE id = (SELECT machine FROM series WHERE id = ?)`), opened, id); err != nil {
			return unavailable("analyze", err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE series SET analyzed = ? WHERE id = ? AND analyzed < ?`), version, id, version); err != nil {
		return unavailable("analyze", err)
	}
	return unavailable("analyze", tx.Commit())
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
