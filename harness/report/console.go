package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// WriteTable prints a JMH-style summary table of every case: score and
// 99.9 % error, allocation figures, custom metrics and group ops on rows of
// their own, and the number of iterations the frequency probe flagged;
// then TableLegend, which says what the columns are.
func WriteTable(w io.Writer, run *result.Run) error {
	align := []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	t.Header("Benchmark", "Mode", "Cnt", "Score", "Error", "Units", "B/op", "allocs/op", "Flagged")
	// go test benchmarks of several packages are named after their
	// package too: two packages may each have a BenchmarkCompress.
	pkgs := map[string]bool{}
	for _, cr := range run.Cases {
		if cr.Case.GoTest {
			pkgs[cr.Case.Pkg] = true
		}
	}
	for _, cr := range run.Cases {
		s := Summarize(cr)
		if cr.Case.GoTest && len(pkgs) > 1 {
			s.Name = cr.Case.Family + "." + s.Name
		}
		if s.Primary.N == 0 {
			status := "FAILED"
			if len(cr.Failures) == 0 {
				status = "not run" // the run was stopped before its forks
			}
			if err := t.Append(s.Name, string(s.Mode), "0", status, "", "", "", "", ""); err != nil {
				return err
			}
			continue
		}
		var bop, aop string
		for _, m := range s.Secondary {
			switch m.Name {
			case "B/op":
				bop = FormatNumber(m.Score)
			case "allocs/op":
				aop = FormatNumber(m.Score)
			}
		}
		flagged := fmt.Sprintf("%d", s.Flagged)
		if s.Failures > 0 {
			flagged += fmt.Sprintf(" (%d forks failed)", s.Failures)
		}
		if err := t.Append(s.Name, string(s.Mode), fmt.Sprint(len(s.Primary.Raw)), FormatNumber(s.Primary.Score), formatError(s.Primary.Error), s.Primary.Unit, bop, aop, flagged); err != nil {
			return err
		}
		for _, m := range s.Ops {
			if err := t.Append(s.Name+"/op="+m.Name, string(s.Mode), fmt.Sprint(len(m.Raw)), FormatNumber(m.Score), formatError(m.Error), m.Unit, "", "", ""); err != nil {
				return err
			}
		}
		for _, m := range s.Secondary {
			if m.Name == "B/op" || m.Name == "allocs/op" || m.Name == "gc/op" {
				continue
			}
			if err := t.Append(s.Name+":"+m.Name, string(s.Mode), fmt.Sprint(len(m.Raw)), FormatNumber(m.Score), formatError(m.Error), m.Unit, "", "", ""); err != nil {
				return err
			}
		}
		if p := s.Primary.Percentiles; s.Mode == result.SampleTime && p != nil {
			for _, q := range []float64{50, 90, 99, 99.9, 99.99} {
				if err := t.Append(fmt.Sprintf("%s:p%s", s.Name, strings.TrimSuffix(percentileKey(q), ".0")), string(s.Mode), "", FormatNumber(p[q]), "", "ns/op", "", "", ""); err != nil {
					return err
				}
			}
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	_, err := io.WriteString(w, TableLegend)
	return err
}

// TableLegend says what WriteTable's columns are.
const TableLegend = `Cnt: forks, the samples Error counts (each fork's mean of its measured iterations is one).
Score: the mean of every measured iteration, as JMH reports it. Error: half width of the 99.9 %
Student-t interval of the forks' means (with 3 forks t = 31.6, so it is wide; comparisons pair
rounds instead, see the change tables).
Flagged: iterations whose frequency probe moved more than the run's tolerance during them.
`

func formatError(e float64) string {
	if math.IsNaN(e) {
		return ""
	}
	return "± " + FormatNumber(e)
}

// FormatNumber prints a score with about four significant digits and no
// exponent.
func FormatNumber(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "NaN"
	case a == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 10:
		return fmt.Sprintf("%.2f", v)
	case a >= 1:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.4g", v)
}
