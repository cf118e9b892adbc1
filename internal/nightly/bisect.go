package nightly

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/bisect"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// bisectDir is where a regression's bisection goes:
// DIR/bisect/<machine-id>/<bad commit>_<benchmark>_<unit>.
func bisectDir(resultsDir, machine string, r history.Regression) string {
	return regressionDir(resultsDir, "bisect", machine, r)
}

// regressionDir is DIR/<kind>/<machine-id>/<bad commit>_<benchmark>_<unit>:
// where what nightly made of regression r goes.
func regressionDir(resultsDir, kind, machine string, r history.Regression) string {
	name := fmt.Sprintf("%s_%s_%s", revision.Short(strings.TrimSuffix(r.Bad, "+dirty")), r.Series.Benchmark, r.Series.Unit)
	return filepath.Join(resultsDir, kind, machine, regexp.MustCompile(`[^A-Za-z0-9._=-]+`).ReplaceAllString(name, "-"))
}

// bisectNew bisects each new regression not bisected before, one after
// the other, until the budget is spent or the run is interrupted, and
// returns the server files of the bisections made. A bisection that finds
// no culprit is reported, not an error: nightly already fails on the
// regression. Its A/B files are no nightly runs: they are not told to the
// environment as written (--server must not upload them as such).
func (n *night) bisectNew(ctx context.Context, s *session.Session, regs []history.Regression) []string {
	var found []string
	n.eachNew(ctx, s, regs, newWork{label: "--bisect", dir: bisectDir, marker: "bisect.json", verb: "bisected", redo: "bisect",
		run: func(ctx context.Context, s *session.Session, prog *revision.Program, r history.Regression, what string, bo bisect.Options) {
			env := s.Env
			env.Say("--bisect: %s, commits %s..%s → %s", what, revision.Short(r.Good), revision.Short(r.Bad), bo.Out)
			rep, err := bisect.Within(ctx, s, n.repo, prog, bo)
			if rep != nil && n.o.Report != nil {
				n.o.Report(rep)
			}
			if err != nil {
				env.Say("--bisect: %s: %s", what, env.Words(err))
			}
			if p, err := writeServerFile(bo.Out, r); err == nil {
				found = append(found, p)
			} else if !os.IsNotExist(err) {
				env.Say("--bisect: %s: %v", what, err)
			}
		}})
	return found
}

// newWork is what nightly does with each new regression: bisect or
// explain it (run) into its dir, where marker says an earlier night did;
// label begins what it says, verb and redo say it.
type newWork struct {
	label, marker, verb, redo string
	dir                       func(resultsDir, machine string, r history.Regression) string
	run                       func(ctx context.Context, s *session.Session, prog *revision.Program, r history.Regression, what string, bo bisect.Options)
}

// eachNew does w with each of regs not done before, one after the other,
// until the budget (BisectBudget) is spent or ctx ends, on s with an
// environment that tells nothing as written: w's files are no nightly
// runs (--server must not upload them as such). A regression measured
// on a working tree with changes has no commit to build again.
func (n *night) eachNew(ctx context.Context, s *session.Session, regs []history.Regression, w newWork) {
	start, env := time.Now(), *s.Env
	env.Wrote = nil
	quiet := s.With(&env)
	prog, err := n.program()
	if err != nil {
		env.Say("%s: %s", w.label, env.Words(err))
		return
	}
	for i, r := range regs {
		what := r.Series.Benchmark + " " + r.Series.Unit
		switch {
		case ctx.Err() != nil:
			return
		case time.Since(start) >= n.o.BisectBudget:
			env.Say("%s: the budget of %s is spent; %d regression(s) not %s", w.label, n.o.BisectBudget, len(regs)-i, w.verb)
			return
		case strings.HasSuffix(r.Good, "+dirty") || strings.HasSuffix(r.Bad, "+dirty"):
			env.Say("%s: %s: a run at the change point measured a working tree with changes, which is no commit to %s", w.label, what, w.redo)
			continue
		}
		dir := w.dir(n.o.Results, n.machine, r)
		if _, err := os.Stat(filepath.Join(dir, w.marker)); err == nil {
			continue // done by an earlier night
		}
		bo, ok := n.bisectOptions(r, dir)
		if !ok {
			env.Say("%s: %s: no planned case is that benchmark", w.label, what)
			continue
		}
		w.run(ctx, quiet, prog, r, what, bo)
	}
}

// writeServerFile writes DIR/bisect.txt, what --server uploads of the
// bisection in DIR of regression r: payload's bisect keys, the report as
// comment lines, and the raw A/B that decided it (the culprit against its
// parent, else the ends), whose machine-id is the machine's. It returns an os.IsNotExist error when the
// bisection wrote no report (it was interrupted before its end).
func writeServerFile(dir string, r history.Regression) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "bisect.json"))
	if err != nil {
		return "", err
	}
	var rep bisect.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return "", fmt.Errorf("%s: %v", filepath.Join(dir, "bisect.json"), err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "bisect.md"))
	if err != nil {
		return "", err
	}
	var raw string
	switch {
	case rep.Own != nil && rep.Own.File != "":
		raw = rep.Own.File
	case rep.Confirm != nil && rep.Confirm.File != "":
		raw = rep.Confirm.File
	default:
		return "", fmt.Errorf("%s: no A/B to send with the bisection", dir)
	}
	ab, err := os.ReadFile(filepath.Join(dir, raw))
	if err != nil {
		return "", err
	}
	var f strings.Builder
	line := func(k, v string) { fmt.Fprintf(&f, "%s: %s\n", k, strings.Join(strings.Fields(v), " ")) }
	line(payload.KeyBisectBenchmark, r.Series.Benchmark)
	line(payload.KeyBisectUnit, r.Series.Unit)
	line(payload.KeyBisectGood, r.Good)
	line(payload.KeyBisectBad, r.Bad)
	if c := rep.Culprit; c != nil {
		line(payload.KeyBisectCulprit, c.Hash)
		line(payload.KeyBisectSubject, c.Subject)
	}
	if o := rep.Own; o != nil && o.Change != nil && o.Explains != nil {
		line(payload.KeyBisectOwn, o.Change.String())
		line(payload.KeyBisectShare, strconv.FormatFloat(o.Explains.Share, 'g', 4, 64))
	}
	if o := rep.Own; o != nil && o.Functions != "" {
		line(payload.KeyBisectFunctions, o.Functions)
	}
	// The report as comments: a line that begins with "# " is no
	// configuration line and no result.
	for _, l := range strings.Split(strings.TrimRight(string(md), "\n"), "\n") {
		fmt.Fprintf(&f, "# %s\n", l)
	}
	f.Write(ab)
	p := filepath.Join(dir, "bisect.txt")
	return p, report.WriteFileAtomic(p, []byte(f.String()))
}

// bisectOptions are the bisection of one regression: its benchmark alone,
// its unit when it is not the time, with the night's options, into dir.
func (n *night) bisectOptions(r history.Regression, dir string) (bisect.Options, bool) {
	bo := bisect.Defaults()
	bo.Good, bo.Bad, bo.Out, bo.Dir, bo.Packages = r.Good, r.Bad, dir, n.o.Dir, n.o.Packages
	bo.BuildCache, bo.Budget, bo.Explain = n.o.BuildCache, n.o.StepBudget, n.o.Explain
	if u := r.Series.Unit; u != "sec/op" && u != "ops/s" {
		bo.Metric = u
	}
	bo.Engine = n.eo
	bo.Engine.Forks = max(bo.Engine.Forks, engine.PrecisionForks)
	for _, c := range n.o.Cases {
		if bisect.RowName(c.Name()) == bisect.RowName(r.Series.Benchmark) {
			bo.Cases = append(bo.Cases, c)
		}
	}
	if len(n.o.Packages) > 0 {
		bo.Engine.Bench = "^Benchmark" + regexp.QuoteMeta(bisect.RowName(r.Series.Benchmark)) + "$"
	} else if len(bo.Cases) == 0 {
		return bo, false
	}
	return bo, true
}

// BisectedLine says what the bisection of r found, for the README: the
// culprit with its own change and a link to the report, or why there is
// none; "" when none ran.
func BisectedLine(resultsDir, machine string, r history.Regression) string {
	dir := bisectDir(resultsDir, machine, r)
	b, err := os.ReadFile(filepath.Join(dir, "bisect.json"))
	if err != nil {
		return ""
	}
	var rep bisect.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return ""
	}
	link := filepath.ToSlash(filepath.Join("bisect", machine, filepath.Base(dir), "bisect.md"))
	if rep.Culprit == nil {
		why := "no culprit decided"
		if rep.Error != "" {
			why = "no culprit: " + rep.Error
		}
		return fmt.Sprintf("bisected, %s ([report](%s))", why, link)
	}
	own := ""
	if o := rep.Own; o != nil && o.Change != nil && o.Explains != nil {
		own = fmt.Sprintf(", %s against its parent, %.0f %% of the change", o.Change, 100*o.Explains.Share)
	}
	if o := rep.Own; o != nil && o.Functions != "" {
		own += "; in " + o.Functions
	}
	return fmt.Sprintf("culprit `%s` %q%s ([bisect report](%s))", revision.Short(rep.Culprit.Hash), rep.Culprit.Subject, own, link)
}
