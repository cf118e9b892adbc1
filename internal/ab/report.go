package ab

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/internal/explain"
	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// Names are the result's column names: each side with its short commit.
func (res *Result) Names() []string {
	return []string{fmt.Sprintf("baseline (%s)", revision.Short(res.Revs[0].Commit)), fmt.Sprintf("experiment (%s)", revision.Short(res.Revs[1].Commit))}
}

// Markdown writes the result's report for the pull request: the table,
// a duet's configuration under it (its times are not the benchmark's
// usual ones), the functions behind the explained rows, then the notes
// and the host in a details block.
func (res *Result) Markdown(w io.Writer) error {
	if err := res.Tables.Markdown(w, res.Names()); err != nil {
		return err
	}
	if res.Engine.Duet {
		fmt.Fprintf(w, "\n> %s\n", Mode(res.Engine))
	}
	res.explainedMarkdown(w)
	res.details(w)
	return nil
}

// explainedMarkdown writes, under the table, the functions behind each
// explained row: its named functions with their change per op, interval
// and share, or why none is named; and where the profiles, difference,
// text and flame graph are.
func (res *Result) explainedMarkdown(w io.Writer) {
	if len(res.Explained) == 0 {
		return
	}
	fmt.Fprintf(w, "\n**Functions behind the rows** (flat CPU per op, experiment − baseline, with its %.0f %% interval over the pairs of profiling forks; a function is named when its change is significant at a false-discovery rate of %g over the functions; share: of the row's change)\n\n",
		100*explain.Confidence, res.Tables.Options.Alpha)
	for _, e := range res.Explained {
		row := strings.TrimPrefix(e.Case, "Benchmark")
		rel, err := filepath.Rel(res.Out, e.Dir)
		if err != nil {
			rel = e.Dir
		}
		text := e.Line()
		if text == "" {
			text = e.Why()
		}
		if e.Err == nil && e.Report != nil && len(e.Report.Notes) > 0 {
			// What the profiles themselves warn of (another toolchain,
			// few samples, unpaired rounds) belongs beside the functions.
			text += " (" + strings.Join(e.Report.Notes, "; ") + ")"
		}
		if al := e.AllocsLine(); al != "" {
			text += "; " + al
		}
		if in := e.InstructionsLine(); in != "" {
			text += "; " + in
			if e.Instructions != nil && len(e.Instructions.Notes) > 0 {
				text += " (" + strings.Join(e.Instructions.Notes, "; ") + ")"
			}
		}
		fmt.Fprintf(w, "- %s: %s; %s\n", row, text, rel)
	}
}

// details writes the notes and the host under the table.
func (res *Result) details(w io.Writer) {
	for _, n := range res.Notes {
		fmt.Fprintf(w, "\n> %s\n", n)
	}
	check, o := res.Host, res.Engine
	fmt.Fprintf(w, "\n<details><summary>host: %s</summary>\n\n", check.Verdict())
	for _, reason := range check.Reasons {
		fmt.Fprintf(w, "- %s\n", reason)
	}
	fmt.Fprintf(w, "\nmachine-id %s, env-id %s, %s; seed %d, %d forks per side, warmup %s, measure %s; raw results: %s\n",
		check.MachineID, check.EnvID, check.Facts.Brand, o.Seed, o.Forks, o.Warmup, o.Measure, res.File)
	if !o.Duet { // a duet's mode is under the table
		fmt.Fprintf(w, "\n%s\n", Mode(o))
	}
	fmt.Fprintf(w, "</details>\n")
}

// CommentMarker opens every pull-request comment [Result.Comment] makes:
// a CI job finds its earlier comment by it and updates that one instead
// of adding another.
const CommentMarker = "<!-- benchctl ab -->"

// Comment is the pull-request comment of the result whose Markdown
// report ([Result.Markdown]) is md: the marker, a title with the two
// revisions, the check's outcome (which regressions fail it, and which
// the policy waives), then the report.
func (res *Result) Comment(md []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n### benchctl ab: %s (%s) against %s (%s)\n\n", CommentMarker,
		res.Revs[1].Rev, revision.Short(res.Revs[1].Commit), res.Revs[0].Rev, revision.Short(res.Revs[0].Commit))
	switch n := len(res.Regressions); {
	case n > 0:
		fmt.Fprintf(&b, ":x: **%d regression(s) fail this check:**", n)
		for _, r := range res.Regressions {
			fmt.Fprintf(&b, " %s %s %s;", r.Benchmark, r.Unit, r.Decision.Change.Interval())
		}
		b.WriteString("\n\n")
	case res.Failed > 0:
		fmt.Fprintf(&b, ":x: **%d fork(s) failed**: see the logs in the results.\n\n", res.Failed)
	default:
		b.WriteString(":white_check_mark: No regression fails this check.\n\n")
	}
	for _, w := range res.Waived {
		fmt.Fprintf(&b, "- %s %s %s does not fail it: %s\n", w.Benchmark, w.Unit, w.Decision.Change.Interval(), w.Why)
	}
	if len(res.Waived) > 0 {
		b.WriteString("\n")
	}
	b.Write(md)
	return b.Bytes()
}

// JSONVerdicts is ab --json's answer: the verdicts of compare.Verdicts
// (schema compare.JSONSchema) with the two revisions, where the results
// went, and the regressions that fail the comparison or that its policy
// waives.
type JSONVerdicts struct {
	compare.Verdicts
	Command     string      `json:"command"`
	Baseline    Side        `json:"baseline"`
	Experiment  Side        `json:"experiment"`
	Out         string      `json:"out"`
	File        string      `json:"file"`
	Confirmed   bool        `json:"confirmed"`
	Regressions []RowChange `json:"regressions"`
	Waived      []RowChange `json:"waived"`
}

// Side is a revision of the comparison.
type Side struct {
	Rev    string `json:"rev"`
	Commit string `json:"commit"`
}

// RowChange names a row of the verdicts and its change (a regression,
// and why it does not fail when waived).
type RowChange struct {
	Unit      string  `json:"unit"`
	Benchmark string  `json:"benchmark"`
	Column    string  `json:"column"`
	Ratio     float64 `json:"ratio"`
	Why       string  `json:"why,omitempty"`
}

// JSON returns the result as ab --json writes it, the columns named as
// in its table.
func (res *Result) JSON() JSONVerdicts {
	v := JSONVerdicts{Verdicts: res.Tables.Verdicts(res.Names()), Command: "ab", Out: res.Out, File: res.File, Confirmed: res.Confirmed,
		Baseline:    Side{Rev: res.Revs[0].Rev, Commit: res.Revs[0].Commit},
		Experiment:  Side{Rev: res.Revs[1].Rev, Commit: res.Revs[1].Commit},
		Regressions: []RowChange{}, Waived: []RowChange{}}
	for _, r := range res.Regressions {
		v.Regressions = append(v.Regressions, RowChange{Unit: r.Unit, Benchmark: r.Benchmark, Column: r.Column, Ratio: r.Ratio})
	}
	for _, w := range res.Waived {
		v.Waived = append(v.Waived, RowChange{Unit: w.Unit, Benchmark: w.Benchmark, Column: w.Column, Ratio: w.Ratio, Why: w.Why})
	}
	return v
}
