package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchproc"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// Power is the power at which a comparison's smallest detectable change
// (Decision.Change.MDE) is computed.
const Power = 0.8

// DefaultMinChange is the margin, in percent, of the commands' verdicts:
// a change smaller than 1 % is not a change, and a comparison whose whole
// interval lies inside ±1 % is "same".
const DefaultMinChange = 1.0

// DefaultAlpha is the verdicts' false-discovery rate, and every command's
// significance level, unless told otherwise.
const DefaultAlpha = 0.05

// ABOptions are the options under which the commands decide an A/B
// file's rows (ab, bisect's steps, calibrate's comparisons): the column
// is the side (toolchain: baseline, experiment), at significance alpha
// with the verdicts' margin minChange in percent.
func ABOptions(alpha, minChange float64) Options {
	return Options{Col: "toolchain", Alpha: alpha, MinChange: minChange}
}

// Decision is what the comparison of one cell with its row's baseline
// found.
type Decision struct {
	// Change is the change with its interval; Err says why there is none
	// (a value that is not positive: no ratio exists).
	Change verdict.Change
	Err    error
	// Q is the p-value adjusted by the Benjamini–Hochberg procedure over
	// every comparison of the same unit in the Tables, and Rejected
	// whether it is at most α: the rows' false-discovery rate is α.
	Q        float64
	Rejected bool
	Verdict  verdict.Verdict
	// Worse is whether the change is for the worse (slower, more bytes),
	// by the unit's direction.
	Worse bool
	// Hosts, for pairs from several files (each one host's run), is
	// what the stratified comparison said of them: how many it was
	// estimated over, and which disagree with the others.
	Hosts *verdict.Heterogeneity
}

// Is reports whether d was decided (without an error) and its verdict is
// v; a nil decision is nothing.
func (d *Decision) Is(v verdict.Verdict) bool {
	return d != nil && d.Err == nil && d.Verdict == v
}

// Decided reports whether d is a verdict, changed or same: a comparison
// that adds rounds until decided gives it no more. A nil decision is not.
func (d *Decision) Decided() bool {
	return d.Is(verdict.Changed) || d.Is(verdict.Same)
}

// Decision returns the decision of cell (row, col) of t, nil for the
// baseline column or a cell without a baseline.
func (t *Table) Decision(row, col benchproc.Key) *Decision {
	return t.decisions[[2]benchproc.Key{row, col}]
}

// change compares cell c with the baseline cell b: paired when at least
// two of their forks come from the same round of one run (the same fork
// key: an interleaved or duet A/B, or the cases of one run), by those
// pairs; unpaired otherwise.
func (ts *Tables) change(b, c *Cell) (verdict.Change, *verdict.Heterogeneity, error) {
	alpha := ts.Options.Alpha
	a, x, keys := pairs(b, c)
	if constant(b.Values) && constant(c.Values) && b.Values[0] == c.Values[0] {
		// Zero allocations on both sides, say: exactly the same.
		n := min(len(b.Values), len(c.Values))
		if len(a) >= 2 {
			n = len(a)
		}
		return verdict.Change{Paired: len(a) >= 2, N: n, Ratio: 1, Lo: 1, Hi: 1, P: 1}, nil, nil
	}
	var ch verdict.Change
	var err error
	switch {
	case len(a) >= 2 && ts.Options.Sequential:
		ch, err = verdict.PairedSequential(a, x, alpha, Power)
	case len(a) >= 2:
		if st := ts.strata(a, x, keys); len(st) >= 2 {
			ch, h, err := verdict.Stratified(st, alpha, Power)
			return ch, &h, err
		}
		ch, err = verdict.Paired(a, x, alpha, Power)
	case ts.Options.Sequential:
		ch, err = verdict.UnpairedSequential(b.Values, c.Values, alpha, Power)
	default:
		ch, err = verdict.Unpaired(b.Values, c.Values, alpha, Power)
	}
	return ch, nil, err
}

// strata splits pairs by the file their fork key is of: each file is one
// host's run (a shard, a fleet job), and a comparison whose pairs come
// from several has the hosts as strata. It is nil for pairs of one file.
func (ts *Tables) strata(a, b []float64, keys []int) []verdict.Stratum {
	by := map[int]*verdict.Stratum{}
	var order []int
	for i, k := range keys {
		f := result.FileOf(k)
		s := by[f]
		if s == nil {
			name := fmt.Sprintf("file %d", f+1)
			if f < len(ts.files) {
				name = ts.files[f]
			}
			s = &verdict.Stratum{Name: name}
			by[f] = s
			order = append(order, f)
		}
		s.A, s.B = append(s.A, a[i]), append(s.B, b[i])
	}
	if len(order) < 2 {
		return nil
	}
	out := make([]verdict.Stratum, len(order))
	for i, f := range order {
		out[i] = *by[f]
	}
	return out
}

// exactChange compares the centers of cells of an exact unit (a count
// such as callgrind's instructions/op): the change is what it is, with
// no interval around it.
func exactChange(b, c *Cell) (verdict.Change, error) {
	x, y := b.Center, c.Center
	if !(x > 0 && y > 0) {
		if x == y {
			return verdict.Change{N: 1, Ratio: 1, Lo: 1, Hi: 1, P: 1}, nil
		}
		return verdict.Change{}, verdict.ErrNotPositive
	}
	ch := verdict.Change{N: 1, Ratio: y / x, Lo: y / x, Hi: y / x, P: 1}
	if x != y {
		ch.P = 0
	}
	return ch, nil
}

// pairs returns the samples of b and c that share a fork key, in key
// order, and their keys.
func pairs(b, c *Cell) (x, y []float64, keys []int) {
	if len(b.Keys) == 0 || len(c.Keys) == 0 {
		return nil, nil, nil
	}
	at := make(map[int]float64, len(c.Keys))
	for i, k := range c.Keys {
		at[k] = c.Values[i]
	}
	for i, k := range b.Keys {
		if v, ok := at[k]; ok {
			x, y, keys = append(x, b.Values[i]), append(y, v), append(keys, k)
		}
	}
	return x, y, keys
}

// constant reports whether xs holds at least two values, all equal: an
// exact measurement (a count), not one sample that happens to be.
func constant(xs []float64) bool {
	return len(xs) >= 2 && !slices.ContainsFunc(xs, func(x float64) bool { return x != xs[0] })
}

// decide compares every cell with its row's baseline and decides it: the
// p-values of each unit's comparisons, across all its tables, go through
// the Benjamini–Hochberg procedure at α, so a suite's rows hold their
// false-discovery rate, and the verdicts use the margin of
// Options.MinChange.
func (ts *Tables) decide() {
	type at struct {
		t   *Table
		key [2]benchproc.Key
	}
	byUnit := map[string][]at{}
	var units []string
	for _, t := range ts.Tables {
		t.decisions = map[[2]benchproc.Key]*Decision{}
		for _, row := range t.Rows {
			base := t.cell(row, t.Cols[0])
			if base == nil {
				continue
			}
			for _, col := range t.Cols[1:] {
				c := t.cell(row, col)
				if c == nil || col.StringValues() == "" {
					continue
				}
				d := ts.compareCell(t, base, c)
				ts.Warnings = append(ts.Warnings, hostWarnings(row.StringValues()+" "+t.Unit, d.Hosts)...)
				key := [2]benchproc.Key{row, col}
				t.decisions[key] = d
				if _, ok := byUnit[t.Unit]; !ok {
					units = append(units, t.Unit)
				}
				byUnit[t.Unit] = append(byUnit[t.Unit], at{t, key})
			}
		}
	}
	margin := ts.Options.MinChange / 100
	for _, u := range units {
		cells := byUnit[u]
		ps := make([]float64, len(cells))
		for i, a := range cells {
			ps[i] = math.NaN()
			if d := a.t.decisions[a.key]; d.Err == nil {
				ps[i] = d.Change.P
			}
		}
		// Sequential changes have P = min(1, 1/E): BH over them is e-BH
		// over their e-values (verdict.EBH), valid at the rounds' end
		// whenever that came.
		q, rejected := verdict.BH(ps, ts.Options.Alpha)
		for i, a := range cells {
			d := a.t.decisions[a.key]
			d.Q, d.Rejected = q[i], rejected[i]
			if d.Err == nil {
				d.Verdict = d.Change.Verdict(margin, d.Rejected)
			}
		}
	}
}

// Tally counts the verdicts of the time and throughput comparisons.
type Tally struct {
	Rows        int `json:"rows"`
	Slower      int `json:"slower"`
	Faster      int `json:"faster"`
	Same        int `json:"same"`
	Unknown     int `json:"unknown"`
	Undecidable int `json:"-"` // no ratio (a value that is not positive)
}

// Tally counts the decisions of every sec/op and ops/s table.
func (ts *Tables) Tally() Tally {
	var n Tally
	for _, t := range ts.Tables {
		if !timeUnit(t.Unit) {
			continue
		}
		for _, d := range t.decisions {
			n.Rows++
			switch {
			case d.Err != nil:
				n.Undecidable++
			case d.Verdict == verdict.Changed && d.Worse:
				n.Slower++
			case d.Verdict == verdict.Changed:
				n.Faster++
			case d.Verdict == verdict.Same:
				n.Same++
			default:
				n.Unknown++
			}
		}
	}
	return n
}

// Headline is the tally as one sentence: what changed, what did not,
// what is still unknown, at which false-discovery rate.
func (ts *Tables) Headline() string {
	n := ts.Tally()
	if n.Rows == 0 {
		return ""
	}
	s := fmt.Sprintf("%d of %d time comparisons changed (%d slower, %d faster)", n.Slower+n.Faster, n.Rows, n.Slower, n.Faster)
	if ts.Options.MinChange > 0 {
		s += fmt.Sprintf(", %d the same within ±%g %%", n.Same, ts.Options.MinChange)
	}
	s += fmt.Sprintf(", %d unknown", n.Unknown)
	if n.Undecidable > 0 {
		s += fmt.Sprintf(", %d without a ratio", n.Undecidable)
	}
	if ts.Options.Sequential {
		return s + fmt.Sprintf("; false-discovery rate %g across them (e-BH on anytime-valid e-values)", ts.Options.Alpha)
	}
	return s + fmt.Sprintf("; false-discovery rate %g across them (Benjamini–Hochberg)", ts.Options.Alpha)
}

// CaseDecisions are the decisions of the time or throughput row of the
// benchmark case name (as result.Case.Name spells it:
// "BenchmarkGet/size=10") against every column in every table that has
// it: its own row, or a group's op=all row, whatever GOMAXPROCS suffix
// it carries; in the order of their columns.
func (ts *Tables) CaseDecisions(name string) []*Decision {
	byCol := ts.RowDecisions(name)
	var out []*Decision
	for _, col := range slices.Sorted(maps.Keys(byCol)) {
		out = append(out, byCol[col])
	}
	return out
}

// RowDecisions are the decisions of the time or throughput row of the
// benchmark case name (as CaseDecisions), by the column value each was
// made against the baseline in: a run's table of an implementation axis
// has a column per value.
func (ts *Tables) RowDecisions(name string) map[string]*Decision {
	out := map[string]*Decision{}
	ts.timeDecisions(name, func(_ string, col benchproc.Key, d *Decision) bool {
		out[col.StringValues()] = d
		return true
	})
	return out
}

// timeDecisions calls each with the unit, column and decision of every
// time or throughput row of case name (as CaseDecisions finds them), in
// the order of the tables and their columns, while each returns true.
func (ts *Tables) timeDecisions(name string, each func(unit string, col benchproc.Key, d *Decision) bool) {
	want := strings.TrimPrefix(name, "Benchmark")
	for _, t := range ts.Tables {
		if !timeUnit(t.Unit) {
			continue
		}
		for _, row := range t.Rows {
			if !sameCase(row.StringValues(), want) {
				continue
			}
			for _, col := range t.Cols[1:] {
				if d := t.Decision(row, col); d != nil && !each(t.Unit, col, d) {
					return
				}
			}
		}
	}
}

// TimeChange is the change of the benchmark case name's time per op, a
// ratio of experiment over baseline with its interval (a throughput row's
// inverted), from the first of its CaseDecisions that is changed, and
// changed true; when none is, from the first of them whatever its
// verdict (the zero Change without one), and changed false.
func (ts *Tables) TimeChange(name string) (c verdict.Change, changed bool) {
	first := true
	ts.timeDecisions(name, func(unit string, _ benchproc.Key, d *Decision) bool {
		if d.Is(verdict.Changed) || first {
			first, changed, c = false, d.Is(verdict.Changed), d.Change
			if unit == "ops/s" && c.Ratio > 0 && c.Lo > 0 {
				c.Ratio, c.Lo, c.Hi = 1/c.Ratio, 1/c.Hi, 1/c.Lo
			}
		}
		return !changed
	})
	return c, changed
}

// Decided reports whether every one of the CaseDecisions of name is
// changed or same; a name without any is not decided.
func (ts *Tables) Decided(name string) bool {
	ds := ts.CaseDecisions(name)
	for _, d := range ds {
		if !d.Decided() {
			return false
		}
	}
	return len(ds) > 0
}

// sameCase reports whether a row's full name is the case want's total:
// want itself or want/op=all, with or without a -N suffix.
func sameCase(row, want string) bool {
	for _, n := range []string{row, result.TrimProcs(row)} {
		if n == want || n == want+"/op=all" {
			return true
		}
	}
	return false
}

// compareCell compares cell c of table t with its row's baseline cell:
// the change, before the verdict.
func (ts *Tables) compareCell(t *Table, base, c *Cell) *Decision {
	d := &Decision{}
	if t.Exact {
		d.Change, d.Err = exactChange(base, c)
	} else {
		d.Change, d.Hosts, d.Err = ts.change(base, c)
	}
	d.Worse = d.Change.Ratio > 1
	if t.HigherIsBetter {
		d.Worse = d.Change.Ratio < 1
	}
	return d
}

// hostWarnings say which hosts of a row's stratified comparison disagree
// with the others, and which were left out.
func hostWarnings(row string, h *verdict.Heterogeneity) []string {
	if h == nil {
		return nil
	}
	var out []string
	for _, d := range h.Disagree {
		out = append(out, fmt.Sprintf("%s: a host disagrees with the others beyond its interval (a noisy or different machine), %s", row, d))
	}
	for _, name := range h.Skipped {
		out = append(out, fmt.Sprintf("%s: %s holds fewer than 2 pairs of the row: left out of its change across hosts", row, name))
	}
	return out
}
