package compare

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/aclements/go-moremath/mathx"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
)

// benchstatOptions is what benchstat's statistics need of a table: the
// units' metadata (a unit's assume=), α and the summaries' confidence.
type benchstatOptions struct {
	meta              benchfmt.UnitMetadataMap
	alpha, confidence float64
}

// The benchstat output is an output format: Text prints, for each cell,
// the summary golang.org/x/perf/benchmath gives of its samples (the
// median with an order-statistic interval by default, or what the unit's
// assume= says) and, against the baseline, benchmath's test of the two
// samples (Mann-Whitney U by default), as benchstat does. Nothing else
// reads them: the verdicts, intervals and detectable changes of Markdown,
// CSV and the commands are Decision's.

// assumption is what benchstat assumes of the table's unit.
func (t *Table) assumption() benchmath.Assumption { return t.benchstat.meta.GetAssumption(t.Unit) }

// benchstatCell is benchstat's view of a cell: its sample (a sorted copy
// of the values) and the summary of it.
type benchstatCell struct {
	sample  *benchmath.Sample
	summary benchmath.Summary
}

// stat is benchstat's view of cell c.
func (t *Table) stat(c *Cell) benchstatCell {
	thr := benchmath.DefaultThresholds
	thr.CompareAlpha = t.benchstat.alpha
	sample := benchmath.NewSample(slices.Clone(c.Values), &thr)
	return benchstatCell{sample, t.assumption().Summary(sample, t.benchstat.confidence)}
}

// Compare is benchstat's comparison of cell c with the baseline cell b.
func (t *Table) Compare(b, c *Cell) benchmath.Comparison {
	return t.assumption().Compare(t.stat(b).sample, t.stat(c).sample)
}

// Text writes the tables in benchstat's layout, with benchstat's numbers.
func (ts *Tables) Text(w io.Writer, names []string) error {
	stats := map[*Cell]benchstatCell{}
	var cellWarnings []string
	for _, t := range ts.Tables {
		for _, row := range t.Rows {
			for _, col := range t.Cols {
				if c := t.cell(row, col); c != nil {
					stats[c] = t.stat(c)
					for _, warn := range stats[c].summary.Warnings {
						cellWarnings = append(cellWarnings, fmt.Sprintf("%s %s: %v", row.StringValues(), t.Unit, warn))
					}
				}
			}
		}
	}
	for _, warn := range append(ts.sortedWarnings(cellWarnings...), ts.powerless()...) {
		fmt.Fprintln(w, "warning:", warn)
	}
	if n := ts.SamplesNote(); n != "" {
		fmt.Fprintln(w, n)
	}
	for ti, t := range ts.Tables {
		if ti > 0 {
			fmt.Fprintln(w)
		}
		if t.Config != "" && (ti == 0 || ts.Tables[ti-1].Config != t.Config) {
			fmt.Fprintln(w, t.Config)
		}
		if err := t.text(w, names, stats); err != nil {
			return err
		}
	}
	return nil
}

// text writes one table in benchstat's layout: each cell's summary with
// its range, the change of each column against the baseline (or "~")
// with its p-value, and the geomean row.
func (t *Table) text(w io.Writer, names []string, stats map[*Cell]benchstatCell) error {
	tab := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head, units := []string{""}, []string{""}
	for i, c := range colNames(t, names) {
		head = append(head, c, "")
		units = append(units, t.Unit, "")
		if i > 0 {
			head = append(head, "", "")
			units = append(units, "vs base", "")
		}
	}
	fmt.Fprintln(tab, strings.Join(head, "\t")+"\t")
	fmt.Fprintln(tab, strings.Join(units, "\t")+"\t")
	for _, row := range t.Rows {
		fmt.Fprintln(tab, strings.Join(t.textRow(row, stats), "\t")+"\t")
	}
	var notes footnotes
	if len(t.Rows) > 1 {
		g := []string{"geomean"}
		for i, gc := range t.geomeans() {
			center, ratio := gc.text(t.Unit)
			g = append(g, center, "")
			if i > 0 {
				g = append(g, ratio, strings.TrimSpace(notes.mark(gc.notes)))
			} else if m := notes.mark(gc.notes); m != "" {
				g[len(g)-1] = strings.TrimSpace(m)
			}
		}
		fmt.Fprintln(tab, strings.Join(g, "\t")+"\t")
	}
	if err := tab.Flush(); err != nil {
		return err
	}
	notes.write(w, "")
	return nil
}

// textRow is one benchmark's fields in benchstat's layout, from each
// cell's benchstat view in stats.
func (t *Table) textRow(row benchproc.Key, stats map[*Cell]benchstatCell) []string {
	sc := t.scaler(row)
	fields := []string{row.StringValues()}
	base := t.cell(row, t.Cols[0])
	for i, col := range t.Cols {
		c := t.cell(row, col)
		if c == nil {
			fields = append(fields, "", "")
			if i > 0 {
				fields = append(fields, "", "")
			}
			continue
		}
		st := stats[c]
		fields = append(fields, sc.Format(st.summary.Center), "± "+st.summary.PctRangeString())
		if i == 0 {
			continue
		}
		if base == nil {
			fields = append(fields, "", "")
			continue
		}
		bst := stats[base]
		cmp := t.assumption().Compare(bst.sample, st.sample)
		fields = append(fields, cmp.FormatDelta(bst.summary.Center, st.summary.Center), "("+cmp.String()+")")
	}
	return fields
}

// MinP is the smallest two-sided p-value the Mann-Whitney U test can give
// for samples of n1 and n2 values: 2 / C(n1+n2, n1), when one sample lies
// wholly above the other. At 3 forks a side it is 0.1.
func MinP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	return math.Min(1, 2/mathx.Choose(n1+n2, n1))
}

// powerless says, once per pair of sample sizes, which of benchstat's
// comparisons cannot be significant at α whatever the data: their samples
// are too few for the U test to reach α (3 forks against 3 never do at
// 0.05).
func (ts *Tables) powerless() []string {
	type pair struct{ a, b int }
	count := map[pair]int{}
	for _, t := range ts.Tables {
		if t.assumption() != benchmath.AssumeNothing || len(t.Cols) < 2 {
			continue
		}
		for _, row := range t.Rows {
			base := t.cell(row, t.Cols[0])
			for _, col := range t.Cols[1:] {
				c := t.cell(row, col)
				if base == nil || c == nil {
					continue
				}
				if MinP(len(base.Values), len(c.Values)) >= ts.Options.Alpha {
					count[pair{len(base.Values), len(c.Values)}]++
				}
			}
		}
	}
	var out []string
	for p, n := range count {
		need := p.a
		for MinP(need, need) >= ts.Options.Alpha && need < 1000 {
			need++
		}
		out = append(out, fmt.Sprintf("%d comparison(s) of %d against %d samples cannot be significant at α = %g: the smallest p-value their test can give is %.3f; %d samples a side can reach it",
			n, p.a, p.b, ts.Options.Alpha, MinP(p.a, p.b), need))
	}
	sort.Strings(out)
	return out
}
