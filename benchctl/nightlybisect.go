package benchctl

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

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// nightlyBisect is what `nightly --bisect` needs to bisect the
// regressions it finds: the run's plan and flags.
type nightlyBisect struct {
	a        *app
	repo     *revision.Repo
	o        engine.Options
	cases    []engine.Case
	f        *runFlags
	nf       *nightlyFlags
	patterns []string
}

// bisectDir is where a regression's bisection goes:
// DIR/bisect/<machine-id>/<bad commit>_<benchmark>_<unit>.
func bisectDir(resultsDir, machine string, r history.Regression) string {
	name := fmt.Sprintf("%s_%s_%s", revision.Short(strings.TrimSuffix(r.Bad, "+dirty")), r.Series.Benchmark, r.Series.Unit)
	return filepath.Join(resultsDir, "bisect", machine, regexp.MustCompile(`[^A-Za-z0-9._=-]+`).ReplaceAllString(name, "-"))
}

// bisectNew bisects each new regression not bisected before, one after
// the other, until the budget is spent or the run is interrupted. A
// bisection that finds no culprit is reported, not an error: nightly
// already fails on the regression.
func (nb *nightlyBisect) bisectNew(ctx context.Context, s *session, regs []history.Regression, resultsDir, machine string) {
	a, start := nb.a, time.Now()
	// A bisection's A/B files are no nightly runs: --server must not
	// upload them as such. What it uploads of a bisection is its
	// server file, which the server records beside the regression.
	written := a.written
	var found []string
	defer func() { a.written = append(written, found...) }()
	var prog *revision.Program
	if len(nb.patterns) == 0 {
		var err error
		if prog, err = a.findProgram(nb.repo, nb.nf.cmd); err != nil {
			a.say("--bisect: %v", err)
			return
		}
	}
	for i, r := range regs {
		what := r.Series.Benchmark + " " + r.Series.Unit
		switch {
		case ctx.Err() != nil:
			return
		case time.Since(start) >= nb.nf.bisectBudget:
			a.say("--bisect: the budget of %s is spent; %d regression(s) not bisected", nb.nf.bisectBudget, len(regs)-i)
			return
		case strings.HasSuffix(r.Good, "+dirty") || strings.HasSuffix(r.Bad, "+dirty"):
			a.say("--bisect: %s: a run at the change point measured a working tree with changes, which is no commit to bisect", what)
			continue
		}
		dir := bisectDir(resultsDir, machine, r)
		if _, err := os.Stat(filepath.Join(dir, "bisect.json")); err == nil {
			continue // bisected by an earlier night
		}
		bs, ok := nb.bisector(s, prog, r, dir)
		if !ok {
			a.say("--bisect: %s: no planned case is that benchmark", what)
			continue
		}
		a.say("--bisect: %s, commits %s..%s → %s", what, revision.Short(r.Good), revision.Short(r.Bad), dir)
		if err := bs.resolve(); err != nil {
			a.say("--bisect: %s: %v", what, err)
			continue
		}
		if err := bs.run(ctx); err != nil {
			a.say("--bisect: %s: %v", what, err)
		}
		if p, err := writeServerFile(dir, r); err == nil {
			found = append(found, p)
		} else if !os.IsNotExist(err) {
			a.say("--bisect: %s: %v", what, err)
		}
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
	var rep bisectReport
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
	// The report as comments: a line that begins with "# " is no
	// configuration line and no result.
	for _, l := range strings.Split(strings.TrimRight(string(md), "\n"), "\n") {
		fmt.Fprintf(&f, "# %s\n", l)
	}
	f.Write(ab)
	p := filepath.Join(dir, "bisect.txt")
	return p, report.WriteFileAtomic(p, []byte(f.String()))
}

// bisector is the bisection of one regression: its benchmark alone, its
// unit when it is not the time, with the night's options.
func (nb *nightlyBisect) bisector(s *session, prog *revision.Program, r history.Regression, dir string) (*bisector, bool) {
	bf := &bisectFlags{good: r.Good, bad: r.Bad, direction: "worse", minChange: compare.DefaultMinChange, alpha: 0.05}
	if u := r.Series.Unit; u != "sec/op" && u != "ops/s" {
		bf.metric = u
	}
	o := nb.o
	o.Forks = max(o.Forks, engine.PrecisionForks)
	var cases []engine.Case
	for _, c := range nb.cases {
		if rowName(c.Name()) == rowName(r.Series.Benchmark) {
			cases = append(cases, c)
		}
	}
	if len(nb.patterns) > 0 {
		o.Bench = "^Benchmark" + regexp.QuoteMeta(rowName(r.Series.Benchmark)) + "$"
	} else if len(cases) == 0 {
		return nil, false
	}
	bs := &bisector{a: nb.a, s: s, o: o, f: nb.f, bf: bf, repo: nb.repo, prog: prog, cases: cases, patterns: nb.patterns, out: dir, start: time.Now()}
	if d := defaultBuildCache(); d != "off" {
		bs.cache = &revision.BuildCache{Dir: d}
	}
	return bs, true
}

// bisectedLine says what the bisection of r found, for the README: the
// culprit with its own change and a link to the report, or why there is
// none; "" when none ran.
func bisectedLine(resultsDir, machine string, r history.Regression) string {
	dir := bisectDir(resultsDir, machine, r)
	b, err := os.ReadFile(filepath.Join(dir, "bisect.json"))
	if err != nil {
		return ""
	}
	var rep bisectReport
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
	return fmt.Sprintf("culprit `%s` %q%s ([bisect report](%s))", revision.Short(rep.Culprit.Hash), rep.Culprit.Subject, own, link)
}
