package compare

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"golang.org/x/perf/benchproc"
)

func (t *Table) cell(row, col benchproc.Key) *Cell { return t.Cells[[2]benchproc.Key{row, col}] }

// colNames labels the columns: names in order where given, else the keys.
func colNames(t *Table, names []string) []string {
	out := make([]string, len(t.Cols))
	for i, c := range t.Cols {
		out[i] = c.StringValues()
		if i < len(names) && names[i] != "" {
			out[i] = names[i]
		}
	}
	return out
}

func formatRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", (r-1)*100)
}

// sortedWarnings lists the warnings and more, sorted, with the sample-size
// warnings of benchstat's summaries ("need >= N samples …", one per cell)
// said once each, with how many cells they concern: a quick run has dozens.
func (ts *Tables) sortedWarnings(more ...string) []string {
	var w []string
	cells := map[string]int{}
	for _, warn := range append(slices.Clone(ts.Warnings), more...) {
		if i := strings.Index(warn, ": need >= "); i >= 0 {
			cells[warn[i+2:]]++
			continue
		}
		w = append(w, warn)
	}
	for msg, n := range cells {
		more := "more forks or iterations give more samples"
		if ts.forkLevel() {
			more = "each fork is one sample: more forks give more"
		}
		w = append(w, fmt.Sprintf("%s (%d summaries; %s)", msg, n, more))
	}
	sort.Strings(w)
	return slices.Compact(w)
}

// CSV writes one line per table × row × column: the cell's center,
// range and sample count, and its decision against the baseline column
// (the same as Markdown's: change with interval, pairing, p, q, verdict,
// detectable change).
func (ts *Tables) CSV(w io.Writer, names []string) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"config", "unit", "benchmark", "column", "center", "min", "max", "n",
		"change_ratio", "change_lo", "change_hi", "paired", "change_p", "q", "verdict", "mde"})
	ts.eachCell(names, func(t *Table, row benchproc.Key, i int, cols []string, c *Cell) {
		rec := []string{t.Config, t.Unit, row.StringValues(), cols[i], g(c.Center), g(c.Min), g(c.Max), fmt.Sprint(len(c.Values)),
			"", "", "", "", "", "", "", ""}
		if d := t.Decision(row, t.Cols[i]); d != nil && d.Err == nil {
			ch := d.Change
			copy(rec[8:], []string{g(ch.Ratio), g(ch.Lo), g(ch.Hi), fmt.Sprint(ch.Paired), g(ch.P), g(d.Q), d.Verdict.String(), g(ch.MDE)})
		}
		cw.Write(rec)
	})
	cw.Flush()
	return cw.Error()
}

func g(v float64) string { return fmt.Sprintf("%g", v) }

// eachCell calls f with every cell of ts that has samples: its table,
// row, column index, the columns' names (names, then the columns' own)
// and the cell, table by table, row by row.
func (ts *Tables) eachCell(names []string, f func(t *Table, row benchproc.Key, i int, cols []string, c *Cell)) {
	for _, t := range ts.Tables {
		cols := colNames(t, names)
		for _, row := range t.Rows {
			for i, col := range t.Cols {
				if c := t.cell(row, col); c != nil {
					f(t, row, i, cols, c)
				}
			}
		}
	}
}

// Markdown writes one table per unit in the shape of the upstream pull
// requests' tables, each side's median with its min–max range, and for
// every column after the baseline the change with its interval, the
// verdict (changed, same or unknown) and the smallest change the samples
// could detect; a geomean row; and, first, the headline that tallies the
// verdicts of the time comparisons.
func (ts *Tables) Markdown(w io.Writer, names []string) error {
	for _, warn := range ts.sortedWarnings() {
		fmt.Fprintf(w, "> warning: %s\n\n", warn)
	}
	if n := ts.SamplesNote(); n != "" {
		fmt.Fprintf(w, "> %s\n\n", n)
	}
	if h := ts.Headline(); h != "" {
		fmt.Fprintf(w, "**%s**\n\n", h)
	}
	tables := ts.withoutNamelessColumns()
	if slices.ContainsFunc(tables, func(t *Table) bool { return !t.nameless }) {
		// One legend for every table of the report.
		fmt.Fprintf(w, "> %s\n\n", ts.legend())
	}
	for ti, t := range tables {
		if ti > 0 {
			fmt.Fprintln(w)
		}
		if t.Config != "" && (ti == 0 || tables[ti-1].Config != t.Config) && !t.nameless {
			fmt.Fprintf(w, "<details><summary>configuration</summary>\n\n```\n%s\n```\n</details>\n\n", t.Config)
		}
		if t.nameless {
			fmt.Fprintf(w, "**%s** of the benchmarks without %s (not compared), median (min–max)\n\n", t.Unit, ts.Options.Col)
			if err := t.markdownRows(w, []string{"value"}, ts.Options); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(w, "**%s**%s, median (min–max) of each side\n\n", t.Unit, t.procsNote())
		if err := t.markdownRows(w, names, ts.Options); err != nil {
			return err
		}
	}
	return nil
}

// markdownRows writes the table itself: a row per benchmark and the
// geomean row, with its footnotes.
func (t *Table) markdownRows(w io.Writer, names []string, o Options) error {
	cols := colNames(t, names)
	header := []string{"Benchmark"}
	align := []tw.Align{tw.AlignLeft}
	for i, c := range cols {
		header = append(header, c)
		align = append(align, tw.AlignRight)
		if i > 0 {
			header = append(header, "Change", "Verdict", "Detectable")
			align = append(align, tw.AlignRight, tw.AlignLeft, tw.AlignRight)
			if len(t.corroborations) > 0 {
				header = append(header, "Moved with it")
				align = append(align, tw.AlignLeft)
			}
		}
	}
	tab := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	tab.Header(header)
	empty := make([]string, 3) // the Change, Verdict and Detectable (and Moved with it) cells of a column
	if len(t.corroborations) > 0 {
		empty = make([]string, 4)
	}
	for _, row := range t.Rows {
		if err := tab.Append(t.markdownRow(row, empty)); err != nil {
			return err
		}
	}
	var notes footnotes
	if len(t.Rows) > 1 {
		rec := []string{"geomean"}
		for i, gc := range t.geomeans() {
			center, ratio := gc.text(t.Unit)
			if i == 0 {
				rec = append(rec, strings.TrimSpace(center+notes.mark(gc.notes)))
				continue
			}
			rec = append(append(rec, center, strings.TrimSpace(ratio+notes.mark(gc.notes))), empty[1:]...)
		}
		if err := tab.Append(rec); err != nil {
			return err
		}
	}
	if err := tab.Render(); err != nil {
		return err
	}
	if len(notes.texts) > 0 {
		fmt.Fprintln(w)
		notes.write(w, "")
	}
	return nil
}

// markdownRow is one benchmark's row: each column's median and range,
// and after the baseline its change, verdict, detectable change and,
// where counted, what moved with it (empty: the cells of a missing one).
func (t *Table) markdownRow(row benchproc.Key, empty []string) []string {
	sc := t.scaler(row)
	base := t.cell(row, t.Cols[0])
	rec := []string{t.RowName(row)}
	for i, col := range t.Cols {
		c := t.cell(row, col)
		if c == nil {
			rec = append(rec, "")
			if i > 0 {
				rec = append(rec, empty...)
			}
			continue
		}
		rec = append(rec, fmt.Sprintf("%s (%s–%s)", sc.Format(c.Center), sc.Format(c.Min), sc.Format(c.Max)))
		if i == 0 {
			continue
		}
		if base == nil {
			rec = append(rec, empty...)
			continue
		}
		rec = append(rec, decisionCells(t.Decision(row, col), base, c)...)
		if len(t.corroborations) > 0 {
			rec = append(rec, t.Corroboration(row, col).text())
		}
	}
	return rec
}

// withoutNamelessColumns splits off, from each table with more than one
// column, the column of results that lack the column key (a floor or
// no-op benchmark without /impl, say): they go in a table of their own
// after it, marked nameless, instead of a column with no name.
func (ts *Tables) withoutNamelessColumns() []*Table {
	var out []*Table
	for _, t := range ts.Tables {
		idx := -1
		for i, c := range t.Cols {
			if c.StringValues() == "" {
				idx = i
			}
		}
		if idx < 0 || len(t.Cols) < 2 {
			out = append(out, t)
			continue
		}
		named, alone := *t, *t
		named.Cols = append(slices.Clone(t.Cols[:idx]), t.Cols[idx+1:]...)
		alone.Cols, alone.nameless = []benchproc.Key{t.Cols[idx]}, true
		named.Rows, alone.Rows = nil, nil
		for _, row := range t.Rows {
			has := false
			for _, c := range named.Cols {
				has = has || t.cell(row, c) != nil
			}
			if has {
				named.Rows = append(named.Rows, row)
			}
			if t.cell(row, t.Cols[idx]) != nil {
				alone.Rows = append(alone.Rows, row)
			}
		}
		if len(named.Rows) > 0 {
			out = append(out, &named)
		}
		out = append(out, &alone)
	}
	return out
}

// ColName is the label of column i of the first table.
func (ts *Tables) ColName(i int, names []string) string {
	if len(ts.Tables) == 0 || i >= len(ts.Tables[0].Cols) {
		return ""
	}
	return colNames(ts.Tables[0], names)[i]
}

// forkLevel reports whether any cell counts forks as its samples.
func (ts *Tables) forkLevel() bool {
	for _, t := range ts.Tables {
		for _, c := range t.Cells {
			if c.Forks > 0 {
				return true
			}
		}
	}
	return false
}

// SamplesNote says what the samples of the comparison are, when forks
// are ("" when every cell counts result lines, as benchstat does).
func (ts *Tables) SamplesNote() string {
	if !ts.forkLevel() {
		return ""
	}
	return "samples: one per fork (the median of its iterations), since iterations of one process are not independent; n counts forks. --samples iteration counts result lines, as benchstat does."
}
