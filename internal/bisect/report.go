package bisect

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// Report is DIR/bisect.json, and what DIR/bisect.md shows.
type Report struct {
	Command   string          `json:"command"`
	Good      revision.Commit `json:"good"`
	Bad       revision.Commit `json:"bad"`
	Commits   int             `json:"commits"` // in the range
	Log2      int             `json:"log2"`    // ⌈log₂ commits⌉
	Direction string          `json:"direction"`
	// Parallel is how many commits each search step probed at once (on
	// a fleet), and Batches how many steps the search made.
	Parallel int `json:"parallel,omitempty"`
	Batches  int `json:"batches,omitempty"`
	// The row followed, and its change from good to bad.
	Benchmark string     `json:"benchmark,omitempty"`
	Unit      string     `json:"unit,omitempty"`
	Config    string     `json:"config,omitempty"`
	Total     *ChangeRep `json:"total,omitempty"`
	Others    []string   `json:"others,omitempty"` // rows that changed the same way too
	Reversed  bool       `json:"reversed,omitempty"`
	Confirm   *StepRep   `json:"confirm,omitempty"`
	// Refined is the second A/B of the ends, when the first left the
	// whole change too uncertain for the steps.
	Refined *StepRep `json:"refined,omitempty"`

	// Ambiguous is set when the ends, measured again, did not confirm
	// the change: nothing was searched.
	Ambiguous bool `json:"ambiguous,omitempty"`

	Steps   []Step           `json:"steps"`
	Culprit *revision.Commit `json:"culprit,omitempty"`
	// Candidate is where the search ended when the commit's own A/B
	// against its parent did not find the change: no culprit is claimed.
	Candidate *revision.Commit  `json:"candidate,omitempty"`
	Own       *OwnChange        `json:"own,omitempty"`
	Suspects  []revision.Commit `json:"suspects,omitempty"`
	Stopped   string            `json:"stopped,omitempty"`
	// ABRuns counts the A/B runs: the confirmation, the steps and the
	// culprit's own.
	ABRuns int           `json:"abRuns"`
	Took   time.Duration `json:"tookNs"`
	Error  string        `json:"error,omitempty"`
}

// ChangeRep is a change as a ratio with its interval and p-value.
type ChangeRep struct {
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	P     float64 `json:"p"`
	N     int     `json:"n"`
}

func changeOf(c verdict.Change) *ChangeRep {
	return &ChangeRep{Ratio: c.Ratio, Lo: c.Lo, Hi: c.Hi, P: c.P, N: c.N}
}

func (c *ChangeRep) String() string {
	return fmt.Sprintf("%+.2f %% [%+.2f, %+.2f]", ratioPct(c.Ratio), ratioPct(c.Lo), ratioPct(c.Hi))
}

// StepRep is an A/B of the ends: its change of the row followed and
// its verdict.
type StepRep struct {
	File    string        `json:"file,omitempty"`
	Rounds  int           `json:"rounds"`
	Took    time.Duration `json:"tookNs"`
	Change  *ChangeRep    `json:"change,omitempty"`
	Verdict string        `json:"verdict,omitempty"`
}

// cell is the step's verdict and change, for the steps table.
func (s *StepRep) cell() string {
	if s.Change == nil {
		return s.Verdict
	}
	return s.Verdict + " " + s.Change.String()
}

func confirmStep(sr *stepRun, out string) *StepRep {
	s := &StepRep{Rounds: sr.rounds, Took: sr.took}
	if sr.m != nil {
		if rel, err := filepath.Rel(out, sr.m.Path); err == nil {
			s.File = rel
		}
	}
	return s
}

// OwnChange is the culprit against its parent.
type OwnChange struct {
	Parent  revision.Commit `json:"parent"`
	Change  *ChangeRep      `json:"change,omitempty"`
	Verdict string          `json:"verdict,omitempty"`
	// Explains is the share of the whole change the culprit's own change
	// is, with its interval.
	Explains *Position `json:"explains,omitempty"`
	Table    string    `json:"-"`
	File     string    `json:"file,omitempty"`
	Note     string    `json:"note,omitempty"`
	// Functions are the functions behind the culprit's own change, the
	// largest first, by CPU, by allocations and, when the bisection
	// counted instructions, by instructions (ab's line of its row without
	// its notes), and Explain the directory of
	// its profiles, difference and flame graph; Unexplained says why
	// there are none.
	Functions   string `json:"functions,omitempty"`
	Explain     string `json:"explain,omitempty"`
	Unexplained string `json:"unexplained,omitempty"`
}

// explained records the explanation of the culprit's own row, the one
// row its step ran.
func (o *OwnChange) explained(es []ab.Explained, out string) {
	for _, e := range es {
		if rel, err := filepath.Rel(out, e.Dir); err == nil {
			o.Explain = rel
		}
		if o.Functions = e.Functions(); o.Functions == "" {
			o.Unexplained = e.Why()
		}
	}
}

// writeReport writes DIR/bisect.md and DIR/bisect.json.
func (bs *bisector) writeReport() error {
	if bs.opts.Out == "" {
		return nil
	}
	var md strings.Builder
	bs.rep.Markdown(&md)
	js, err := json.MarshalIndent(&bs.rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(bs.opts.Out, 0o755); err != nil {
		return err
	}
	if err := report.WriteFileAtomic(filepath.Join(bs.opts.Out, "bisect.json"), append(js, '\n')); err != nil {
		return err
	}
	p := filepath.Join(bs.opts.Out, "bisect.md")
	if err := report.WriteFileAtomic(p, []byte(md.String())); err != nil {
		return err
	}
	bs.env.Say("report: %s", p)
	return nil
}

func commitLine(c revision.Commit) string {
	return fmt.Sprintf("%s %q (%s)", revision.Short(c.Hash), c.Subject, c.Date.UTC().Format("2006-01-02 15:04"))
}

// Markdown renders the report, as DIR/bisect.md holds it.
func (r *Report) Markdown(w io.Writer) {
	what := "the time or throughput"
	if r.Benchmark != "" {
		what = r.Benchmark + " " + r.Unit
	}
	fmt.Fprintf(w, "# Bisection of %s\n\n`%s`\n\n", what, r.Command)
	fmt.Fprintf(w, "- good: %s\n- bad: %s\n- %d commits along bad's first parents (⌈log₂⌉ = %d); %d A/B runs, %s of machine time\n",
		commitLine(r.Good), commitLine(r.Bad), r.Commits, r.Log2, r.ABRuns, r.Took.Round(time.Second))
	if r.Parallel > 1 {
		fmt.Fprintf(w, "- on a fleet, up to %d commits probed at once: the search took %d step(s) (⌈log_%d⌉ = %d)\n", r.Parallel, r.Batches, r.Parallel+1, ceilLog(r.Commits, r.Parallel+1))
	}
	if r.Total != nil {
		fmt.Fprintf(w, "- the whole change, bad against good: %s (%d rounds)\n", r.Total, r.Total.N)
	}
	if len(r.Others) > 0 {
		fmt.Fprintf(w, "- also changed the same way, not followed: %s\n", strings.Join(r.Others, ", "))
	}
	fmt.Fprintln(w)
	switch {
	case r.Culprit != nil:
		fmt.Fprintf(w, "## Culprit: %s\n\n%s\n\n", commitLine(*r.Culprit), r.Culprit.Hash)
		r.ownMarkdown(w)
		if r.Error != "" {
			fmt.Fprintf(w, "Stopped before the culprit was measured against its parent: %s\n\n", r.Error)
		}
	case r.Candidate != nil:
		fmt.Fprintf(w, "## No culprit claimed\n\nThe search ended at %s, %s.\n\n%s\n\n", commitLine(*r.Candidate), r.Candidate.Hash, r.Error)
		r.ownMarkdown(w)
	case r.Stopped != "":
		fmt.Fprintf(w, "## Stopped after %d steps: %s\n\nThe change is in one of: %s\n\n", len(r.Steps), r.Stopped, shortList(r.Suspects))
	case r.Error != "":
		fmt.Fprintf(w, "## No culprit\n\n%s\n\n", r.Error)
	case len(r.Suspects) > 0:
		fmt.Fprintf(w, "## No culprit decided\n\nThe change is in one of %d commits, which stayed unknown or did not build: %s\n\n", len(r.Suspects), shortList(r.Suspects))
	}
	if r.Confirm == nil {
		return
	}
	fmt.Fprint(w, "## Steps\n\n")
	r.stepsTable(w)
}

// ownMarkdown is the culprit's own change and table.
func (r *Report) ownMarkdown(w io.Writer) {
	o := r.Own
	if o == nil {
		return
	}
	if o.Change != nil && o.Explains != nil {
		fmt.Fprintf(w, "Against its parent %s: %s, which explains %.0f %% [%.0f, %.0f] of the whole change.\n\n",
			revision.Short(o.Parent.Hash), o.Change, 100*o.Explains.Share, 100*o.Explains.Lo, 100*o.Explains.Hi)
	}
	if o.Note != "" {
		fmt.Fprintf(w, "> %s\n\n", o.Note)
	}
	switch {
	case o.Functions != "":
		fmt.Fprintf(w, "Functions behind it (flat CPU per op against its parent, named at a false-discovery rate over the functions): %s; profiles, difference and flame graph in %s\n\n", o.Functions, o.Explain)
	case o.Unexplained != "":
		fmt.Fprintf(w, "Functions behind it: %s (%s)\n\n", o.Unexplained, o.Explain)
	}
	if o.Table != "" {
		fmt.Fprintf(w, "%s\n", o.Table)
	}
	if o.File != "" {
		fmt.Fprintf(w, "Raw results: %s\n\n", o.File)
	}
}

// stepsTable is every A/B of the search, the confirmation first.
func (r *Report) stepsTable(w io.Writer) {
	align := []tw.Align{tw.AlignRight, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	t.Header([]string{"#", "Commit", "Subject", "Verdict", "Share of the change", "Rounds", "Time", "Raw"})
	total := ""
	if r.Total != nil {
		total = r.Total.String()
	}
	first := r.Confirm.cell()
	if first == "" && total != "" { // a report written before steps recorded their verdict
		first = "changed " + total
	}
	_ = t.Append([]string{"0", revision.Short(r.Good.Hash) + ".." + revision.Short(r.Bad.Hash), "the ends", first, "", fmt.Sprint(r.Confirm.Rounds),
		r.Confirm.Took.Round(time.Second).String(), r.Confirm.File})
	if f := r.Refined; f != nil {
		_ = t.Append([]string{"0", revision.Short(r.Good.Hash) + ".." + revision.Short(r.Bad.Hash), "the ends, again (a narrower whole change)", f.cell(), "", fmt.Sprint(f.Rounds),
			f.Took.Round(time.Second).String(), f.File})
	}
	for i, s := range r.Steps {
		at, verdict := "", s.Verdict.String()+": "+stepNote(s.Verdict)
		if s.Position != nil {
			at = fmt.Sprintf("%.0f %% [%.0f, %.0f]", 100*s.Position.Share, 100*s.Position.Lo, 100*s.Position.Hi)
		}
		if s.Reason != "" {
			verdict += " (" + s.Reason + ")"
		}
		raw := ""
		if s.Dir != "" {
			raw = filepath.Join(s.Dir, "ab.txt")
		}
		_ = t.Append([]string{fmt.Sprint(i + 1), fmt.Sprintf("%s (%d of %d)", revision.Short(s.Commit.Hash), s.Index+1, r.Commits), s.Commit.Subject, verdict, at,
			fmt.Sprint(s.Rounds), s.Took.Round(time.Second).String(), raw})
	}
	_ = t.Render()
	fmt.Fprintln(w)
}

// ceilLog is ⌈log_base n⌉, for n ≥ 1.
func ceilLog(n, base int) int {
	k := 0
	for p := 1; p < n; p *= base {
		k++
	}
	return k
}
