package compare

import (
	"fmt"
	"math"

	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// legend is the line, once per report above its tables, that says how
// their changes and verdicts were decided.
func (ts *Tables) legend() string {
	o := ts.Options
	s := fmt.Sprintf("Change: the estimated ratio with its %g %% interval (by pairs where both sides' forks ran in the same rounds; rank tests from 6 pairs or 4 a side, t-tests below); Verdict: at a false-discovery rate of %g over each unit's rows",
		100*(1-o.Alpha), o.Alpha)
	if o.Sequential {
		s = fmt.Sprintf("Change: the estimated ratio with its %g %% confidence sequence (anytime-valid: it holds at every round the comparison could have stopped at; by pairs where both sides' forks ran in the same rounds); Verdict: e-values at a false-discovery rate of %g over each unit's rows (e-BH)",
			100*(1-o.Alpha), o.Alpha)
	}
	if o.MinChange > 0 {
		s += fmt.Sprintf(", same when the interval lies within ±%g %%", o.MinChange)
	}
	return s + fmt.Sprintf("; Detectable: the smallest change these samples find with %.0f %% power", 100*Power)
}

// decisionCells are the Change, Verdict and Detectable cells of a
// decision of cell c against base.
func decisionCells(d *Decision, base, c *Cell) []string {
	switch {
	case d == nil:
		return []string{"", "", ""}
	case d.Err != nil && base.Center == 0 && c.Center != 0:
		return []string{"no % from a zero baseline", "unknown", ""}
	case d.Err != nil:
		return []string{"no ratio", "unknown", ""}
	}
	ch := d.Change
	change := pct(ch.Ratio)
	if math.IsInf(ch.Hi, 1) {
		change += " [no interval]"
	} else if ch.Lo != ch.Hi {
		change += fmt.Sprintf(" [%s, %s]", pctNum(ch.Lo), pctNum(ch.Hi))
	}
	v := d.Verdict.String()
	if d.Verdict == verdict.Changed {
		v = "**" + v + "**"
	}
	n := fmt.Sprintf("n=%d", ch.N)
	if ch.Paired {
		n = fmt.Sprintf("%d pairs", ch.N)
	}
	v += fmt.Sprintf(" (p%s q%s, %s)", pval(ch.P), pval(d.Q), n)
	mde := "–"
	if !math.IsInf(ch.MDE, 1) && !math.IsNaN(ch.MDE) {
		mde = fmt.Sprintf("±%s %%", num(100*ch.MDE))
	}
	return []string{change, v, mde}
}

// pct is a ratio as a signed percent change: "+2.1 %".
func pct(r float64) string { return pctNum(r) + " %" }

// pctNum is a ratio as a signed percent change without the sign's unit:
// two decimals under 1 %, one above.
func pctNum(r float64) string {
	x := (r - 1) * 100
	if math.Abs(x) < 1 {
		return fmt.Sprintf("%+.2f", x)
	}
	return fmt.Sprintf("%+.1f", x)
}

func num(x float64) string {
	if math.Abs(x) < 1 {
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// pval is a p-value after its name: "=0.013", or "<0.001".
func pval(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("=%.3f", p)
}
