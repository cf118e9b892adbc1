package compare

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"
	"golang.org/x/perf/benchunit"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// OneTable, as Options.Table, makes one table per unit whatever the files'
// configurations: benchstat's -table "" (an empty Table means the default,
// .config).
const OneTable = " "

// Options configure a comparison. The zero value is benchstat's default.
type Options struct {
	Table, Row, Col string  // projections (default .config, .fullname, .file)
	Filter          string  // benchproc filter (default "*")
	Alpha           float64 // significance level (default DefaultAlpha)
	// Confidence is the level of the intervals around each cell's center
	// in benchstat's output (Text); the verdicts' intervals are at 1−Alpha.
	// Default 0.95.
	Confidence float64
	// MinChange is the verdicts' margin, in percent: a significant change
	// smaller than it is not "changed", and a comparison whose whole
	// interval lies within ±MinChange is "same".
	MinChange float64
	// Sequential decides the rows by the anytime-valid test
	// (verdict.PairedSequential, or UnpairedSequential where forks do not
	// pair) and the e-Benjamini–Hochberg procedure across a unit's rows:
	// the verdicts of a comparison that added rounds until its rows were
	// decided (ab --until-decided), valid however often it looked.
	Sequential bool
	// Samples is the unit of replication: Forks (the default) makes each
	// fork of a benchctl file one sample, the median of its iterations;
	// Iterations makes each result line one, as benchstat does. Results
	// without a fork marker (files of go test or other tools) are always
	// counted by line.
	Samples string
	// Baseline, when set, is the column value that goes first (the
	// baseline every other column is compared with), whatever the sort
	// order of the column projection.
	Baseline string
	// Ignore is a projection of keys whose variations are ignored when
	// results are grouped (benchstat's -ignore): HostKeys, say, for the
	// files of several hosts of one class, whose pairs are strata of one
	// row rather than tables of their own.
	Ignore string
}

// HostKeys are the header keys that differ between machines of one class
// (one hardware fingerprint): the host's name, its environment and
// whether it was pinned.
const HostKeys = "machine,env-id,host-pinned"

// The units of replication of Options.Samples.
const (
	Forks      = "fork"
	Iterations = "iteration"
)

// SpreadRatio is how many times the spread of the forks' means must
// exceed what the spread of their iterations explains (σ/√k for k
// iterations per fork) before a comparison says so: the process, not the
// iteration, then dominates the noise.
const SpreadRatio = 3

func (o *Options) defaults() {
	if o.Table == "" {
		o.Table = ".config"
	}
	if o.Row == "" {
		o.Row = ".fullname"
	}
	if o.Col == "" {
		o.Col = ".file"
	}
	if o.Filter == "" {
		o.Filter = "*"
	}
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.Samples == "" {
		o.Samples = Forks
	}
}

// Cell is one row × column of one table: its samples and their center.
type Cell struct {
	// Values are the samples: one per fork (its iterations' median) when
	// Forks > 0, in the order of Keys, else one per result line in file
	// order. They are never sorted: pairs are matched by Keys.
	Values []float64
	// Center is the median of Values: the cell's value in the tables,
	// the geomean and the change charts.
	Center float64
	Min    float64 // of Raw
	Max    float64
	// Raw are the result lines' values, in file order; Forks is the
	// number of forks they came from (0: no fork marker, or Iterations).
	Raw   []float64
	Forks int
	// Keys are the fork keys of Values (see result.ForkKey), when Forks >
	// 0: samples of two cells with the same key were measured in the same
	// round of one run, and are compared as pairs.
	Keys []int
	// Between is the standard deviation of the forks' means and Within
	// the pooled standard deviation of the iterations around their fork's
	// mean (both NaN when they cannot be computed).
	Between, Within float64
}

// Table is one unit of one configuration.
type Table struct {
	Config string
	Unit   string
	// Exact is set by a `Unit … assume=exact` line (a count such as
	// callgrind's instructions/op): its cells are compared as they are,
	// without an interval.
	Exact bool
	// HigherIsBetter is set by a `Unit … better=higher` line (ops/s).
	HigherIsBetter bool
	Rows, Cols     []benchproc.Key
	Cells          map[[2]benchproc.Key]*Cell

	benchstat benchstatOptions // what Text's statistics assume of the unit

	decisions      map[[2]benchproc.Key]*Decision
	corroborations map[[2]benchproc.Key]*Corroboration
	nameless       bool // the results without the column key, split off for Markdown
}

// Tables is the result of Build.
type Tables struct {
	Options  Options
	Tables   []*Table
	Warnings []string
	// Damaged says which files were cut short (also among Warnings): the
	// tables hold what they had, and a command fails after showing them.
	Damaged []string
	// files are the files read, by their index in the fork keys: a
	// file is one host's run, a stratum of a comparison whose pairs
	// come from several.
	files []string
}

// Build reads the files and summarizes every cell.
func Build(paths []string, o Options) (*Tables, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no files to compare")
	}
	markers := map[string]map[int]int{}
	var damaged []string
	for i, p := range paths {
		if _, after, ok := strings.Cut(p, "="); ok {
			p = after
		}
		if err := resultsFile(p); err != nil {
			return nil, err
		}
		if _, seen := markers[p]; seen {
			continue // the same file again: the same processes
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue // the reader names it
		}
		if err := longLine(p, data); err != nil {
			return nil, err
		}
		if cut := cutShort(p, data); cut != "" {
			damaged = append(damaged, cut)
		}
		markers[p] = result.InFile(result.ForkMarkers(data), i)
	}
	f := &benchfmt.Files{Paths: paths, AllowLabels: true}
	ts, err := build(f, f.Units, paths, true, markers, o)
	if ts != nil {
		ts.Damaged = damaged
		ts.Warnings = append(ts.Warnings, damaged...)
	}
	return ts, err
}

// MaxLine is the longest line, newline included, x/perf's benchfmt
// reader takes (bufio.Scanner's default token size).
const MaxLine = bufio.MaxScanTokenSize

// longLine refuses a file with a line benchfmt cannot read, naming the
// line: the reader's own error is bufio's "token too long", positioned at
// the line before.
func longLine(name string, data []byte) error {
	n := 0
	for line := range bytes.Lines(data) {
		n++
		if len(line) > MaxLine {
			return fmt.Errorf("%s:%d: a line of %d bytes, longer than the %d a Go benchmark-format line may have", name, n, len(line), MaxLine)
		}
	}
	return nil
}

// cutShort says when data ends without a newline: a results writer ends
// every line, so the file was cut short (a copy or a run that stopped
// mid-write) and what followed is missing.
func cutShort(name string, data []byte) string {
	if len(data) == 0 || data[len(data)-1] == '\n' {
		return ""
	}
	return fmt.Sprintf("%s:%d: the file ends mid-line: it was cut short, and the results after that point are missing", name, bytes.Count(data, []byte("\n"))+1)
}

// MaxFileSize is the largest results file Build reads: it reads each
// whole.
const MaxFileSize = 1 << 30

// CheckResultsFile refuses what no reader of results files should open:
// see resultsFile.
func CheckResultsFile(p string) error { return resultsFile(p) }

// resultsFile refuses what Build cannot read as a results file: a FIFO,
// which would block for ever, a device such as /dev/zero, which never
// ends, or a file over MaxFileSize. A path that does not exist is left to
// the reader, which names it.
func resultsFile(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return nil
	case !fi.Mode().IsRegular():
		kind := "a special file"
		switch m := fi.Mode(); {
		case m&os.ModeNamedPipe != 0:
			kind = "a FIFO, which would block"
		case m&os.ModeDevice != 0:
			kind = "a device, which may never end"
		case m.IsDir():
			kind = "a directory"
		}
		return fmt.Errorf("%s is not a regular file (%s): a results file is", p, kind)
	case fi.Size() > MaxFileSize:
		return fmt.Errorf("%s holds %d bytes, more than the %d a results file may", p, fi.Size(), MaxFileSize)
	}
	return nil
}

// BuildData is Build on results held in memory, read as a file named name
// (a command prints its table before it writes the file, so a full disk
// does not lose it).
func BuildData(name string, data []byte, o Options) (*Tables, error) {
	r := benchfmt.NewReader(bytes.NewReader(data), name)
	return build(r, func() map[benchfmt.UnitMetadataKey]*benchfmt.UnitMetadata { return r.Units() }, []string{name}, false,
		map[string]map[int]int{name: result.ForkMarkers(data)}, o)
}

// records is what build reads: benchfmt.Files or a benchfmt.Reader.
type records interface {
	Scan() bool
	Result() benchfmt.Record
	Err() error
}

// build reads every record of files into tables by the options'
// projections, summarizes their cells and decides every comparison.
// paths are the files named on the command line: each must hold a
// result; markers map each file's lines to the fork that wrote them.
func build(files records, units func() map[benchfmt.UnitMetadataKey]*benchfmt.UnitMetadata, paths []string, labels bool, markers map[string]map[int]int, o Options) (*Tables, error) {
	o.defaults()
	if o.Samples != Forks && o.Samples != Iterations {
		return nil, fmt.Errorf("samples %q: want %s or %s", o.Samples, Forks, Iterations)
	}
	if o.Alpha < 0 || o.Alpha > 1 || o.Confidence <= 0 || o.Confidence >= 1 {
		return nil, fmt.Errorf("alpha %g or confidence %g out of range", o.Alpha, o.Confidence)
	}
	c, err := newCollector(o, markers)
	if err != nil {
		return nil, err
	}
	for files.Scan() {
		c.add(files.Result())
	}
	if err := files.Err(); err != nil {
		return nil, err
	}
	for _, p := range paths {
		name := p
		if _, after, ok := strings.Cut(p, "="); ok && labels {
			name = after // a "label=path" argument, as benchfmt.Files reads it
		}
		if c.results[name] == 0 {
			return nil, fmt.Errorf("%s holds no benchmark result: is it a Go benchmark-format file?", name)
		}
	}
	c.summarize(benchfmt.UnitMetadataMap(units()))
	out := c.out
	for _, p := range paths {
		if _, after, ok := strings.Cut(p, "="); ok && labels {
			p = after
		}
		out.files = append(out.files, p)
	}
	if common, cols := commonRows(out.Tables); cols > 1 && common == 0 {
		out.Warnings = append(out.Warnings, "the columns have no benchmark in common: nothing is compared")
	}
	out.decide()
	out.corroborate()
	return out, nil
}

// collector sorts results into tables, rows and columns by the options'
// projections, then summarizes every cell.
type collector struct {
	o                     Options
	markers               map[string]map[int]int // file → line → fork
	filter                *benchproc.Filter
	tableBy, rowBy, colBy *benchproc.Projection
	unitBy                *benchproc.Field
	out                   *Tables
	byKey                 map[benchproc.Key]*Table
	order                 []benchproc.Key
	tables                map[*Table]*tableData
	results               map[string]int // file → results read
}

// tableData is what a table collects before its cells are summarized.
type tableData struct {
	rows, cols map[benchproc.Key]bool
	values     map[[2]benchproc.Key][]float64
	forks      map[[2]benchproc.Key][]int
}

func newCollector(o Options, markers map[string]map[int]int) (*collector, error) {
	c := &collector{o: o, markers: markers, out: &Tables{Options: o},
		byKey: map[benchproc.Key]*Table{}, tables: map[*Table]*tableData{}, results: map[string]int{}}
	var err error
	if c.filter, err = benchproc.NewFilter(o.Filter); err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	var pp benchproc.ProjectionParser
	if c.tableBy, c.unitBy, err = pp.ParseWithUnit(o.Table, c.filter); err != nil {
		return nil, fmt.Errorf("table projection: %w", err)
	}
	if c.rowBy, err = pp.Parse(o.Row, c.filter); err != nil {
		return nil, fmt.Errorf("row projection: %w", err)
	}
	if c.colBy, err = pp.Parse(o.Col, c.filter); err != nil {
		return nil, fmt.Errorf("column projection: %w", err)
	}
	if o.Ignore != "" {
		// Parsed, the keys leave .config; the projection itself is unused.
		if _, err = pp.Parse(o.Ignore, c.filter); err != nil {
			return nil, fmt.Errorf("ignored keys: %w", err)
		}
	}
	return c, nil
}

// warn adds a warning to the tables.
func (c *collector) warn(w string) { c.out.Warnings = append(c.out.Warnings, w) }

// add files one record: a syntax error as a warning, a result's values
// into their tables' cells (impossible values left out, with a warning).
func (c *collector) add(r benchfmt.Record) {
	switch rec := r.(type) {
	case *benchfmt.SyntaxError:
		c.warn(rec.Error())
	case *benchfmt.Result:
		file, line := rec.Pos()
		c.results[file]++
		var bad []benchfmt.Value
		if rec.Values, bad = possible(rec.Values); len(rec.Values) == 0 {
			why := ""
			if bad[0].Value < 0 {
				why = " (below zero)"
			}
			c.warn(fmt.Sprintf("%s:%d: %g %s value, result left out%s", file, line, bad[0].Value, bad[0].Unit, why))
			return
		}
		for _, v := range bad {
			c.warn(fmt.Sprintf("%s:%d: %s left out", file, line, describeValue(v)))
		}
		if ok, err := c.filter.Apply(rec); !ok {
			if err != nil {
				c.warn(err.Error())
			}
			return
		}
		row, col := c.rowBy.Project(rec), c.colBy.Project(rec)
		for i, tk := range c.tableBy.ProjectValues(rec) {
			t, d := c.table(tk)
			if !d.rows[row] {
				d.rows[row] = true
				t.Rows = append(t.Rows, row)
			}
			if !d.cols[col] {
				d.cols[col] = true
				t.Cols = append(t.Cols, col)
			}
			cell := [2]benchproc.Key{row, col}
			d.values[cell] = append(d.values[cell], rec.Values[i].Value)
			d.forks[cell] = append(d.forks[cell], c.markers[file][line])
		}
	}
}

// table is the table of key tk, made on first use.
func (c *collector) table(tk benchproc.Key) (*Table, *tableData) {
	if t := c.byKey[tk]; t != nil {
		return t, c.tables[t]
	}
	t := &Table{Config: configText(c.tableBy, c.unitBy, tk), Unit: tk.Get(c.unitBy), Cells: map[[2]benchproc.Key]*Cell{}}
	d := &tableData{rows: map[benchproc.Key]bool{}, cols: map[benchproc.Key]bool{},
		values: map[[2]benchproc.Key][]float64{}, forks: map[[2]benchproc.Key][]int{}}
	c.byKey[tk], c.tables[t] = t, d
	c.order = append(c.order, tk)
	return t, d
}

// summarize sorts the tables, their rows and columns (the baseline column
// first), and summarizes every cell, by fork or by iteration, warning of
// cells whose forks spread far more than their iterations.
func (c *collector) summarize(meta benchfmt.UnitMetadataMap) {
	benchproc.SortKeys(c.order)
	spread := map[string]float64{} // row and unit → the largest ratio of its cells
	var spreadOrder []string
	for _, k := range c.order {
		t := c.byKey[k]
		benchproc.SortKeys(t.Rows)
		benchproc.SortKeys(t.Cols)
		if i := slices.IndexFunc(t.Cols, func(k benchproc.Key) bool { return k.StringValues() == c.o.Baseline }); c.o.Baseline != "" && i > 0 {
			t.Cols = append(append([]benchproc.Key{t.Cols[i]}, t.Cols[:i]...), t.Cols[i+1:]...)
		}
		if m := meta.Get(t.Unit, "assume"); m != nil && m.Value == "exact" {
			t.Exact = true
		}
		t.benchstat = benchstatOptions{meta: meta, alpha: c.o.Alpha, confidence: c.o.Confidence}
		if m := meta.Get(t.Unit, "better"); m != nil && m.Value == "higher" {
			t.HigherIsBetter = true
		}
		d := c.tables[t]
		for key, raw := range d.values {
			cell := c.cell(raw, d.forks[key])
			if ratio := cell.SpreadRatio(); ratio > SpreadRatio {
				k := key[0].StringValues() + " " + t.Unit
				if _, seen := spread[k]; !seen {
					spreadOrder = append(spreadOrder, k)
				}
				spread[k] = math.Max(spread[k], ratio)
			}
			t.Cells[key] = cell
		}
		c.out.Tables = append(c.out.Tables, t)
	}
	c.out.Warnings = append(c.out.Warnings, spreadWarnings(spreadOrder, spread)...)
}

// cell summarizes one cell's raw values (by fork when the options say so).
func (c *collector) cell(raw []float64, forks []int) *Cell {
	cell := &Cell{Raw: raw, Values: raw, Min: math.Inf(1), Max: math.Inf(-1), Between: math.NaN(), Within: math.NaN()}
	if c.o.Samples == Forks {
		cell.byFork(forks)
	}
	cell.Center = verdict.Median(cell.Values)
	for _, v := range raw {
		cell.Min, cell.Max = math.Min(cell.Min, v), math.Max(cell.Max, v)
	}
	return cell
}

// spreadWarnings say which rows' forks spread far more than their
// iterations explain: each by name when they are few, else at once.
func spreadWarnings(rows []string, spread map[string]float64) []string {
	const why = "each process's own state (memory layout, heap, scheduling) dominates the noise; more forks narrow it, more iterations do not"
	if len(rows) <= 3 {
		var out []string
		for _, k := range rows {
			out = append(out, fmt.Sprintf("%s: the forks' means spread up to %.1f× what their iterations explain: %s", k, spread[k], why))
		}
		return out
	}
	worst := rows[0]
	for _, k := range rows {
		if spread[k] > spread[worst] {
			worst = k
		}
	}
	return []string{fmt.Sprintf("in %d rows the forks' means spread more than %d× what their iterations explain (up to %.1f×, %s): %s", len(rows), SpreadRatio, spread[worst], worst, why)}
}

// scaler returns the common scale of a row's centers.
func (t *Table) scaler(row benchproc.Key) benchunit.Scaler {
	var cs []float64
	for _, col := range t.Cols {
		if c := t.Cells[[2]benchproc.Key{row, col}]; c != nil {
			cs = append(cs, c.Center)
		}
	}
	return benchunit.CommonScale(cs, benchunit.ClassOf(t.Unit))
}

// configText is a table key's configuration as "key: value" lines, the
// unit left out.
func configText(p *benchproc.Projection, unit *benchproc.Field, k benchproc.Key) string {
	var lines []string
	for _, f := range p.FlattenedFields() {
		if f == unit {
			continue
		}
		if v := k.Get(f); v != "" {
			lines = append(lines, f.String()+": "+v)
		}
	}
	return strings.Join(lines, "\n")
}

// Regression is a change for the worse in a time or throughput unit:
// its verdict is Changed.
type Regression struct {
	Unit, Benchmark, Column string
	Ratio                   float64
	Decision                *Decision
}

// Regressions lists, for every column after the baseline, the rows whose
// time (sec/op) or throughput (ops/s) changed for the worse: rejected at
// the false-discovery rate α across the unit's rows, and by at least the
// minimum change.
func (ts *Tables) Regressions() []Regression {
	var out []Regression
	for _, t := range ts.Tables {
		if !timeUnit(t.Unit) {
			continue
		}
		for _, row := range t.Rows {
			for _, col := range t.Cols[1:] {
				d := t.Decision(row, col)
				if d != nil && d.Verdict == verdict.Changed && d.Worse {
					out = append(out, Regression{Unit: t.Unit, Benchmark: t.RowName(row), Column: col.StringValues(), Ratio: d.Change.Ratio, Decision: d})
				}
			}
		}
	}
	return out
}

// Bar is one row of a change chart, in percent: the change of the
// medians, and the changes between the extreme runs of the two sides.
type Bar struct {
	Name           string
	Change, Lo, Hi float64
}

// ChangeBars returns, for the first time or throughput table, the change
// of column col (≥ 1) against the baseline in every row that has both.
func (ts *Tables) ChangeBars(col int) (unit string, bars []Bar) {
	for _, t := range ts.Tables {
		if !timeUnit(t.Unit) || col >= len(t.Cols) {
			continue
		}
		for _, row := range t.Rows {
			b, c := t.Cells[[2]benchproc.Key{row, t.Cols[0]}], t.Cells[[2]benchproc.Key{row, t.Cols[col]}]
			if b == nil || c == nil || b.Center == 0 || b.Min <= 0 {
				continue
			}
			bars = append(bars, Bar{
				Name:   t.RowName(row),
				Change: 100 * (c.Center/b.Center - 1),
				Lo:     100 * (c.Min/b.Max - 1),
				Hi:     100 * (c.Max/b.Min - 1),
			})
		}
		return t.Unit, bars
	}
	return "", nil
}

// commonRows counts the rows present in every column, and the most
// columns a table has.
func commonRows(tables []*Table) (common, cols int) {
	for _, t := range tables {
		// The results without the column key (floors beside an axis) are
		// not compared: they have no column of their own.
		named := slices.DeleteFunc(slices.Clone(t.Cols), func(k benchproc.Key) bool { return k.StringValues() == "" })
		cols = max(cols, len(named))
		for _, row := range t.Rows {
			all := true
			for _, col := range named {
				if t.Cells[[2]benchproc.Key{row, col}] == nil {
					all = false
				}
			}
			if all {
				common++
			}
		}
	}
	return common, cols
}

// possible keeps the values a measurement can take and returns the
// others: NaN or infinite (a summary of one would be a number that means
// nothing), and a time, size or count below zero. The other values of the
// same result line stay.
func possible(vals []benchfmt.Value) (kept, bad []benchfmt.Value) {
	for _, v := range vals {
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) || (v.Value < 0 && nonNegative[v.Unit]) {
			bad = append(bad, v)
		} else {
			kept = append(kept, v)
		}
	}
	return kept, bad
}

// describeValue is v as its file wrote it.
func describeValue(v benchfmt.Value) string {
	unit, x := v.Unit, v.Value
	if v.OrigUnit != "" {
		unit, x = v.OrigUnit, v.OrigValue
	}
	if x < 0 {
		return fmt.Sprintf("%g %s (below zero)", x, unit)
	}
	return fmt.Sprintf("%g %s", x, unit)
}

// nonNegative are the (normalized) units no measurement can take below
// zero: a time, a size, a count of allocations.
var nonNegative = map[string]bool{"sec/op": true, "B/op": true, "allocs/op": true, "B/s": true}
