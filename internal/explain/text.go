package explain

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchunit"
)

// nsOp formats nanoseconds per op as benchstat does seconds: "212.0ns/op".
func nsOp(ns float64) string {
	return benchunit.Scale(ns*1e-9, benchunit.Decimal) + "s/op"
}

// signed is nsOp with its sign.
func signed(ns float64) string { return withSign(ns, nsOp) }

// withSign is v formatted by format (which formats a magnitude) after
// its sign.
func withSign(v float64, format func(float64) string) string {
	if v >= 0 {
		return "+" + format(v)
	}
	return "-" + format(-v)
}

func (d Delta) String() string {
	return fmt.Sprintf("%s [%s, %s]", signed(d.Mean), signed(d.Lo), signed(d.Hi))
}

// ShortName is a function's name without its package's import path
// before the last slash, as pprof's reports shorten it:
// "github.com/google/btree.(*BTree).Get" is "btree.(*BTree).Get".
func ShortName(name string) string {
	paren := strings.IndexAny(name, "([")
	head := name
	if paren >= 0 {
		head = name[:paren]
	}
	if i := strings.LastIndex(head, "/"); i >= 0 {
		return name[i+1:]
	}
	return name
}

// Line is the report's top named functions, at most top, on one line:
// "btree.(*BTree).Get +212.0ns/op [+180.0ns/op, +245.0ns/op] (61 % of the
// change)"; "" when none is named.
func (r *Report) Line(top int) string {
	var parts []string
	for _, f := range r.Named() {
		if len(parts) == top {
			break
		}
		s := ShortName(f.Name) + " " + f.Flat.String()
		if !math.IsNaN(f.Share) {
			s += " (" + sharePercent(f.Share) + " of the change)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// WriteText writes the report: the whole change of CPU per op, then the
// named functions and the top of the others, at most top rows in all.
func (r *Report) WriteText(w io.Writer, top int) error {
	fmt.Fprintf(w, "CPU per op: baseline %s, experiment %s, change %s over %d pairs of profiling forks (%.0f %% intervals)\n",
		nsOp(r.Base), nsOp(r.Exp), r.Total, r.Pairs, 100*Confidence)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "%d of %d functions named (flat change significant at a false-discovery rate of %g over them)\n\n", len(r.Named()), len(r.Functions), r.Alpha)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "function\tbaseline flat\texperiment flat\tflat change\tcum change\tshare\tq\tnamed")
	for i, f := range r.Functions {
		if i == top {
			break
		}
		share := ""
		if !math.IsNaN(f.Share) {
			share = fmt.Sprintf("%.0f %%", 100*f.Share)
		}
		named := ""
		if f.Named {
			named = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%s\n", ShortName(f.Name), nsOp(f.Base), nsOp(f.Exp), f.Flat, f.Cum, share, f.Q, named)
	}
	return tw.Flush()
}

// sharePercent is a share of a change in percent: whole percents, and
// one decimal under 1 % (a small share prints as -0.5 %, not -0 %).
func sharePercent(share float64) string {
	p := 100 * share
	if math.Abs(p) < 1 {
		return fmt.Sprintf("%.1f %%", p)
	}
	return fmt.Sprintf("%.0f %%", p)
}
