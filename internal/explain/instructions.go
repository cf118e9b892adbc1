package explain

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchunit"
)

// InstructionsFloor is the least flat change, as a fraction of the
// baseline's instructions per op, of a function CompareCounts names.
// Counts need no interval; but a program's count is not quite fixed
// (the runtime's timers, a map's random seed, and callgrind losing the
// measured loop while the scheduler switches stacks: about 0.1 % here),
// and a change below this is not told apart from that.
const InstructionsFloor = 0.005

// TopLines is how many of the top function's source lines an
// InstructionsReport gives.
const TopLines = 10

// InstructionFunction is one function's instructions per op on each side
// and their change, flat and cumulative.
type InstructionFunction struct {
	Name  string  `json:"name"`
	Base  float64 `json:"base_flat_per_op"`
	Exp   float64 `json:"experiment_flat_per_op"`
	Flat  float64 `json:"flat_change"`
	Cum   float64 `json:"cum_change"`
	Share float64 `json:"share"` // of the whole change; 0 without one
	Named bool    `json:"named"`
}

// LineChange is one source line of a function: where it is at each
// revision (a zero SourceLine where it is not), its text, and its
// instructions per op on each side.
type LineChange struct {
	Base      SourceLine `json:"base"`
	Exp       SourceLine `json:"experiment"`
	Text      string     `json:"text,omitempty"`
	BaseCount float64    `json:"base_per_op"`
	ExpCount  float64    `json:"experiment_per_op"`
}

// InstructionsReport is the function-level change of one case's
// instructions per op between two sides, counted: a function is named when
// its flat change is at least InstructionsFloor of the baseline's whole.
type InstructionsReport struct {
	Base      float64               `json:"base_per_op"`
	Exp       float64               `json:"experiment_per_op"`
	Functions []InstructionFunction `json:"functions"`
	// Lines are the first named function's lines whose count changed
	// most, at most TopLines, matched across the revisions by their
	// text where the sources can be read (else by file name and line).
	Lines []LineChange `json:"lines,omitempty"`
	Notes []string     `json:"notes,omitempty"`
}

// Named are the report's named functions, the largest change first.
func (r *InstructionsReport) Named() []InstructionFunction {
	return named(r.Functions, func(f InstructionFunction) bool { return f.Named })
}

// CompareCounts compares two sides' counted instructions per op.
func CompareCounts(base, exp *Counted) *InstructionsReport {
	r := &InstructionsReport{Base: base.Total, Exp: exp.Total}
	r.Notes = append(append(r.Notes, base.Notes...), exp.Notes...)
	slices.Sort(r.Notes)
	r.Notes = slices.Compact(r.Notes)
	whole := exp.Total - base.Total
	names := sortedKeys(base.Cum, exp.Cum)
	for _, n := range names {
		f := InstructionFunction{Name: n, Base: base.Flat[n], Exp: exp.Flat[n], Cum: exp.Cum[n] - base.Cum[n]}
		f.Flat = f.Exp - f.Base
		if whole != 0 {
			f.Share = f.Flat / whole
		}
		f.Named = math.Abs(f.Flat) >= InstructionsFloor*base.Total && base.Total > 0
		r.Functions = append(r.Functions, f)
	}
	namedFirst(r.Functions, func(f InstructionFunction) bool { return f.Named }, func(x, y InstructionFunction) int {
		return cmp.Compare(math.Abs(y.Flat), math.Abs(x.Flat))
	})
	if named := r.Named(); len(named) > 0 {
		n := named[0].Name
		r.Lines = lineChanges(base.Lines[n], exp.Lines[n], &sources{read: base.Source}, &sources{read: exp.Source})
	}
	return r
}

// lineChanges matches a function's lines of two revisions and returns
// those whose count changed most. A line is matched by its file's name
// and its text (the n-th line of that text in the function), so a line
// that moved is still itself; without the source, by file name and
// number.
func lineChanges(base, exp map[SourceLine]float64, bsrc, esrc *sources) []LineChange {
	type side struct {
		at    SourceLine
		count float64
	}
	keyed := func(lines map[SourceLine]float64, src *sources) map[string]side {
		out := map[string]side{}
		seen := map[string]int{}
		for _, l := range slices.SortedFunc(maps.Keys(lines), func(a, b SourceLine) int {
			return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
		}) {
			key := fmt.Sprintf("%s:%d", filepath.Base(l.File), l.Line)
			if text, ok := src.line(l); ok {
				key = filepath.Base(l.File) + "\x00" + text
				seen[key]++
				key += fmt.Sprintf("\x00%d", seen[key])
			}
			out[key] = side{l, lines[l]}
		}
		return out
	}
	b, e := keyed(base, bsrc), keyed(exp, esrc)
	var out []LineChange
	for _, k := range sortedKeys(b, e) {
		lc := LineChange{Base: b[k].at, Exp: e[k].at, BaseCount: b[k].count, ExpCount: e[k].count}
		if lc.Exp.File != "" {
			lc.Text, _ = esrc.line(lc.Exp)
		} else {
			lc.Text, _ = bsrc.line(lc.Base)
		}
		if lc.ExpCount != lc.BaseCount {
			out = append(out, lc)
		}
	}
	slices.SortStableFunc(out, func(x, y LineChange) int {
		return cmp.Compare(math.Abs(y.ExpCount-y.BaseCount), math.Abs(x.ExpCount-x.BaseCount))
	})
	return out[:min(len(out), TopLines)]
}

// sources reads one revision's source files once each, as their lines,
// with read (os.ReadFile when nil).
type sources struct {
	read  func(file string) ([]byte, error)
	files map[string][]string
}

// line is l's text, trimmed, when its file can be read.
func (s *sources) line(l SourceLine) (string, bool) {
	lines, ok := s.files[l.File]
	if !ok {
		read := s.read
		if read == nil {
			read = os.ReadFile
		}
		if b, err := read(l.File); err == nil {
			lines = strings.Split(string(b), "\n")
		}
		if s.files == nil {
			s.files = map[string][]string{}
		}
		s.files[l.File] = lines
	}
	if l.Line < 1 || l.Line > len(lines) {
		return "", false
	}
	return strings.TrimSpace(lines[l.Line-1]), true
}

// instrOp formats instructions per op: "2.400k instr/op".
func instrOp(v float64) string {
	return benchunit.Scale(v, benchunit.Decimal) + " instr/op"
}

// signedInstr is instrOp with its sign.
func signedInstr(v float64) string { return withSign(v, instrOp) }

// Line is the report's top named functions, at most top, on one line:
// "btree.(*BTree).Get +212 instr/op (61 % of the change)"; "" when none
// is named.
func (r *InstructionsReport) Line(top int) string {
	var parts []string
	for _, f := range r.Named() {
		if len(parts) == top {
			break
		}
		s := ShortName(f.Name) + " " + signedInstr(f.Flat)
		if f.Share != 0 {
			s += " (" + sharePercent(f.Share) + " of the change)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// WriteText writes the report: the whole change, the named functions and
// the others with a change, at most top rows, then the first named
// function's lines.
func (r *InstructionsReport) WriteText(w io.Writer, top int) error {
	fmt.Fprintf(w, "instructions per op (callgrind, counted): baseline %s, experiment %s, change %s\n",
		instrOp(r.Base), instrOp(r.Exp), signedInstr(r.Exp-r.Base))
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "%d functions named (flat change at least %g %% of the baseline's instructions per op)\n\n", len(r.Named()), 100*InstructionsFloor)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "function\tbaseline flat\texperiment flat\tflat change\tcum change\tshare\tnamed")
	rows := 0
	for _, f := range r.Functions {
		if rows == top {
			break
		}
		if f.Flat == 0 && f.Cum == 0 {
			continue
		}
		rows++
		named := ""
		if f.Named {
			named = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.0f %%\t%s\n", ShortName(f.Name), instrOp(f.Base), instrOp(f.Exp), signedInstr(f.Flat), signedInstr(f.Cum), 100*f.Share, named)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Lines) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nlines of %s that changed most (where each is at each revision):\n\n", ShortName(r.Named()[0].Name))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "baseline\texperiment\tbaseline count\texperiment count\tchange\tsource")
	for _, l := range r.Lines {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", lineAt(l.Base), lineAt(l.Exp), instrOp(l.BaseCount), instrOp(l.ExpCount), signedInstr(l.ExpCount-l.BaseCount), l.Text)
	}
	return tw.Flush()
}

// lineAt is a line's file name and number, "-" where the revision has no
// such line.
func lineAt(l SourceLine) string {
	if l.File == "" {
		return "-"
	}
	return fmt.Sprintf("%s:%d", filepath.Base(l.File), l.Line)
}

// Change is the whole change of instructions per op, signed.
func (r *InstructionsReport) Change() string { return signedInstr(r.Exp - r.Base) }
