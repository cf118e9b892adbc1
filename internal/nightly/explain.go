package nightly

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/bisect"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Explanation is a new regression explained without a bisection: an A/B
// of the commits of the runs around its change point (the last before it
// as the baseline, the first after it as the experiment), its row's
// change and verdict there, and the functions behind that change. It is
// DIR/explain/<machine-id>/<bad commit>_<benchmark>_<unit>/explained.json,
// beside the A/B's ab.txt, its report explain.md and the profiles of
// ab.ExplainDir.
type Explanation struct {
	Benchmark string `json:"benchmark"`
	Unit      string `json:"unit"`
	Good      string `json:"good"`
	Bad       string `json:"bad"`
	// Change is the row's change in the A/B, "+30.09 % [+28.10, +32.00]",
	// and Verdict its verdict (changed, same or unknown).
	Change  string `json:"change,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	// Functions are the functions behind the change, the largest first
	// (ab.Explained.Functions), and Profiles the directory of their
	// profiles, difference and flame graph; Unexplained says why none is
	// named.
	Functions   string `json:"functions,omitempty"`
	Profiles    string `json:"profiles,omitempty"`
	Unexplained string `json:"unexplained,omitempty"`
	// Error says why the A/B could not decide the row (a revision that
	// does not build, failed forks).
	Error string `json:"error,omitempty"`
}

// explainDir is where a regression's explanation goes:
// DIR/explain/<machine-id>/<bad commit>_<benchmark>_<unit>.
func explainDir(resultsDir, machine string, r history.Regression) string {
	return regressionDir(resultsDir, "explain", machine, r)
}

// explainNew explains each new regression not explained before by an A/B
// of its two runs' commits, one after the other, until the budget
// (BisectBudget) is spent or the run is interrupted. An explanation that
// names nothing is reported, not an error: nightly already fails on the
// regression. Its files are not told to the environment as written.
func (n *night) explainNew(ctx context.Context, s *session.Session, regs []history.Regression) {
	n.eachNew(ctx, s, regs, newWork{label: "explain", dir: explainDir, marker: "explained.json", verb: "explained", redo: "build again",
		run: func(ctx context.Context, s *session.Session, prog *revision.Program, r history.Regression, what string, bo bisect.Options) {
			env := s.Env
			env.Say("explain: %s, an A/B of %s against %s → %s", what, revision.Short(r.Good), revision.Short(r.Bad), bo.Out)
			x, err := n.explainOne(ctx, s, prog, r, bo)
			if ctx.Err() != nil {
				return // interrupted: explained again by the next night
			}
			if err != nil {
				x.Error = env.Words(err)
				env.Say("explain: %s: %s", what, x.Error)
			}
			if err := writeExplanation(bo.Out, x); err != nil {
				env.Say("explain: %s: %v", what, err)
			}
		}})
}

// program is the benchmark program whose revisions a regression's A/B
// builds; nil when the night records packages' go test benchmarks.
func (n *night) program() (*revision.Program, error) {
	if len(n.o.Packages) > 0 {
		return nil, nil
	}
	return ab.FindProgram(n.o.Dir, n.repo, n.o.Program)
}

// explainOne runs the A/B of regression r's commits into bo.Out, its
// rows decided by the anytime-valid verdicts within StepBudget and its
// changed row explained by its functions (ab.Compare on the night's
// session), and reads what it found of r's row.
func (n *night) explainOne(ctx context.Context, s *session.Session, prog *revision.Program, r history.Regression, bo bisect.Options) (*Explanation, error) {
	x := &Explanation{Benchmark: r.Series.Benchmark, Unit: r.Series.Unit, Good: r.Good, Bad: r.Bad}
	ws, err := ab.NewWorkspace(s, n.repo, "nightly")
	if err != nil {
		return x, err
	}
	defer ws.Close()
	ws.Cache = bo.Cache()
	// Commits, built in worktrees: the working tree's changes do not matter.
	revs, err := ab.ResolvePair(n.repo, r.Good, r.Bad, true)
	if err != nil {
		return x, err
	}
	eo := bo.Engine
	eo.UntilDecided, eo.Forks, eo.Budget = true, max(eo.Forks, verdict.MinSamples), n.o.StepBudget
	if eo.Budget <= 0 {
		eo.Budget = engine.DefaultBudget
	}
	set, err := ab.BuildPair(ctx, s.Env, ws, n.o.Dir, revs, prog, nil, bo.Cases, eo, n.o.Packages)
	if err != nil {
		return x, err
	}
	if len(set.Cases) == 0 {
		return x, session.Failed("%s is not a benchmark of both %s and %s", r.Series.Benchmark, revision.Short(r.Good), revision.Short(r.Bad))
	}
	if err := os.MkdirAll(bo.Out, 0o755); err != nil {
		return x, session.FailedError{Msg: err.Error()}
	}
	ao := ab.Options{Base: r.Good, Head: r.Bad, Engine: eo, Alpha: compare.DefaultAlpha, MinChange: compare.DefaultMinChange,
		Explain: n.o.Explain, Out: bo.Out, Started: time.Now()}
	res, err := ab.Compare(ctx, s, ao, set, n.repo.Root)
	if res == nil {
		return x, err
	}
	x.read(res, r)
	if err != nil && len(res.Regressions) > 0 && res.Failed == 0 {
		err = nil // the regressions ab found are the one explained
	}
	var md strings.Builder
	if merr := res.Markdown(&md); merr == nil {
		if werr := report.WriteFileAtomic(filepath.Join(bo.Out, "explain.md"), []byte(md.String())); werr != nil && err == nil {
			err = werr
		}
	}
	return x, err
}

// read takes r's row of the A/B res: its change and verdict, and the
// functions behind it.
func (x *Explanation) read(res *ab.Result, r history.Regression) {
	names := res.Names()
	row := bisect.RowName(r.Series.Benchmark)
	for _, v := range res.Tables.Verdicts(names).Rows {
		if v.Column != names[1] || v.Unit != r.Series.Unit || bisect.RowName(v.Benchmark) != row {
			continue
		}
		x.Verdict = v.Verdict
		if c := v.Change; c != nil && c.Lo != nil && c.Hi != nil {
			x.Change = (&bisect.ChangeRep{Ratio: c.Ratio, Lo: *c.Lo, Hi: *c.Hi}).String()
		}
	}
	for _, e := range res.Explained {
		if bisect.RowName(e.Case) != row {
			continue
		}
		if rel, err := filepath.Rel(res.Out, e.Dir); err == nil {
			x.Profiles = rel
		}
		if x.Functions = e.Functions(); x.Functions == "" {
			x.Unexplained = e.Why()
		}
	}
}

// writeExplanation writes DIR/explained.json.
func writeExplanation(dir string, x *Explanation) error {
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return report.WriteFileAtomic(filepath.Join(dir, "explained.json"), append(b, '\n'))
}

// ExplainedLine says what the explanation of r found, for the README: the
// change the A/B of its commits measured and the functions behind it,
// with a link to its report; or why none is named; "" when none ran.
func ExplainedLine(resultsDir, machine string, r history.Regression) string {
	dir := explainDir(resultsDir, machine, r)
	b, err := os.ReadFile(filepath.Join(dir, "explained.json"))
	if err != nil {
		return ""
	}
	var x Explanation
	if err := json.Unmarshal(b, &x); err != nil {
		return ""
	}
	rel := filepath.ToSlash(filepath.Join("explain", machine, filepath.Base(dir)))
	switch {
	case x.Change == "":
		why := x.Error
		if why == "" {
			why = "no " + x.Unit + " row"
		}
		return fmt.Sprintf("not explained: the A/B of its commits decided nothing (%s)", why)
	case x.Verdict != "changed":
		return fmt.Sprintf("the A/B of its commits did not reproduce it: %s, %s ([report](%s/explain.md))", x.Change, x.Verdict, rel)
	case x.Functions != "":
		return fmt.Sprintf("the A/B of its commits: %s; in %s ([explanation](%s/explain.md))", x.Change, x.Functions, rel)
	}
	return fmt.Sprintf("the A/B of its commits: %s; %s ([report](%s/explain.md))", x.Change, x.Unexplained, rel)
}
