package benchctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/calibrate"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// calFlags are the flags of calibrate beyond the run flags.
type calFlags struct {
	trials, group int
	alpha         float64
	pair          string
}

func (a *app) calibrateCmd() *cobra.Command {
	var f runFlags
	var cf calFlags
	c := &cobra.Command{
		Use:   "calibrate [run flags] [--trials N] [--group G] [--pair PARAM=BASE,CHANGED]",
		Short: "Measure this machine's false-alarm rate: many A/A comparisons of this binary against itself",
		Long: `calibrate runs the selected benchmarks with this very binary on both sides of an A/B run (A and B),
forks interleaved as ab interleaves them, --trials × --group forks a side. It then splits the forks
into --trials independent comparisons of --group forks a side. For each benchmark and overall it
reports how many comparisons come out significant at --alpha although nothing changed: with one
sample per fork (the median of its iterations, as compare and ab count) and, on the same data, with
one sample per iteration (as benchstat counts). Each rate has its exact binomial interval. It also
reports the smallest change the fork-level test could detect at the observed spread of forks, and
how often nightly's change-point rule alarms on flat series made of these forks (3 a night, 30
nights a series).

--pair PARAM=BASE,CHANGED compares the case at PARAM=BASE on side A with the case at PARAM=CHANGED
on side B. With a parameter whose values differ by a known amount of work, it reports how often
the change is found at 2 to 10 forks a side. DIR/calibration.md and DIR/calibration.json hold the
figures, and DIR/aa.txt the raw results.`,
		Example: fmt.Sprintf(`  %[1]s calibrate --suite SUITE --trials 200 --group 5 --warmup 1x20ms --measure 3x20ms
  %[1]s calibrate --bench Work --pair extra=0,5 --trials 100`, a.name),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, cases, err := a.plan(cmd, &f)
			if err != nil {
				return err
			}
			if err := forksWithoutProfiles(o, "calibrate compares forks: --forks does not apply (it runs --trials × --group)",
				"--prof is not supported by calibrate"); err != nil && cmd.Flags().Changed("prof") {
				return err
			}
			if cmd.Flags().Changed("forks") || o.Precision > 0 {
				return usageError{errors.New("--forks and --precision do not apply to calibrate: it runs --trials × --group forks a side")}
			}
			switch {
			case cf.trials < 1 || cf.group < 2:
				return usageError{fmt.Errorf("--trials %d --group %d: want at least 1 comparison of at least 2 forks a side", cf.trials, cf.group)}
			case cf.trials*cf.group > engine.MaxForks:
				return usageError{fmt.Errorf("--trials %d × --group %d = %d forks a side: at most %d", cf.trials, cf.group, cf.trials*cf.group, engine.MaxForks)}
			}
			if err := checkStats(cf.alpha, 0); err != nil {
				return err
			}
			o.Forks = cf.trials * cf.group
			pair, err := parsePair(cf.pair, cases)
			if err != nil {
				return usageError{err}
			}
			return a.doCalibrate(cmd, o, cases, &f, &cf, pair)
		},
	}
	a.addRunFlags(c, &f, engine.DefaultOptions())
	_ = c.Flags().MarkHidden("prof") // refused by calibrate: profile with run --prof
	fl := c.Flags()
	fl.IntVar(&cf.trials, "trials", 200, "A/A comparisons per benchmark")
	fl.IntVar(&cf.group, "group", 5, "forks a side per comparison")
	fl.Float64Var(&cf.alpha, "alpha", 0.05, "significance level")
	fl.StringVar(&cf.pair, "pair", "", "PARAM=BASE,CHANGED: also measure how often the change from BASE to CHANGED is detected")
	return c
}

// calPair is --pair: the parameter and its two values.
type calPair struct{ name, base, changed string }

func parsePair(s string, cases []engine.Case) (*calPair, error) {
	if s == "" {
		return nil, nil
	}
	name, values, err := engine.ParseOverride(s)
	if err != nil || len(values) != 2 {
		return nil, fmt.Errorf("--pair %q: want PARAM=BASE,CHANGED", s)
	}
	p := &calPair{name, values[0], values[1]}
	var base, changed bool
	for _, c := range cases {
		base = base || param(c.Params, name) == p.base
		changed = changed || param(c.Params, name) == p.changed
	}
	if !base || !changed {
		return nil, fmt.Errorf("--pair %s: the selected cases lack %s=%s or %s=%s (select both, e.g. -p %s=%s,%s)", s, name, p.base, name, p.changed, name, p.base, p.changed)
	}
	return p, nil
}

// calReport is calibration.json.
type calReport struct {
	MachineID, EnvID, HostPinned string
	Alpha                        float64
	Trials, Group                int
	Warmup, Measure              string
	Benchmarks                   []calBench
	Overall                      struct{ Fork, Iteration calibrate.Rate }
	// Nightly counts the flat series of 30 nights of 3 forks, made of
	// the A/A forks, on which nightly's rule raises an alarm.
	Nightly calibrate.Rate
	Pair    []calPairResult `json:",omitempty"`
}

type calBench struct {
	Name string
	calibrate.AAResult
}

type calPairResult struct {
	Base, Changed string
	ByForks       []struct {
		Forks int
		calibrate.Rate
		MinP float64
	}
}

func (a *app) doCalibrate(cmd *cobra.Command, o engine.Options, cases []engine.Case, f *runFlags, cf *calFlags, pair *calPair) error {
	s, err := a.prepare(cmd.Context(), &o, f)
	if err != nil {
		return err
	}
	defer s.release()
	out, err := f.outDir("calibration")
	if err != nil {
		return err
	}
	exe, err := a.selfExecutable()
	if err != nil {
		return err
	}
	a.say("%d cases × %d forks a side (A/A: this binary on both sides), warmup %s, measure %s → %s", len(cases), o.Forks, o.Warmup, o.Measure, out)
	// Thousands of fork logs stay out of the results directory.
	logs, err := os.MkdirTemp("", "benchctl-calibrate-logs-")
	if err != nil {
		return failedError{err.Error()}
	}
	self := engine.Program{Executable: exe}
	r, err := a.measure(cmd.Context(), s, &measurement{o: o, cases: cases, dir: a.dir, logDir: logs,
		sides: []engine.Side{{Name: "A", Launch: self}, {Name: "B", Launch: self}},
		out:   resultsFile{filepath.Join(out, "aa.txt"), replaceFile}})
	keepLogs(a, logs, r, err)
	if err != nil {
		return err
	}
	if r.interrupted != nil {
		// Rates over the forks that ran would pass for the asked-for run.
		a.say("no calibration report: the run was interrupted; the forks that ran are in %s", r.path)
		return r.interrupted
	}
	if err := a.writeCalibration(o, cf, pair, s, r.header, r.runs, out); err != nil {
		return err
	}
	return r.outcome(nil, out)
}

// writeCalibration computes the A/A rates (and the detection rates of
// --pair) of the two sides' forks and writes calibration.md and
// calibration.json.
func (a *app) writeCalibration(o engine.Options, cf *calFlags, pair *calPair, s *session, h report.Header, runs []*result.Run, out string) error {
	rep := calReport{MachineID: h.MachineID, EnvID: h.EnvID, HostPinned: h.HostPinned, Alpha: cf.alpha,
		Trials: cf.trials, Group: cf.group, Warmup: o.Warmup.String(), Measure: o.Measure.String()}
	var fh, fn, ih, in int
	for i, cr := range runs[0].Cases {
		r := calibrate.AA(cr.ForkScores(), runs[1].Cases[i].ForkScores(), cf.group, cf.alpha)
		rep.Benchmarks = append(rep.Benchmarks, calBench{cr.Case.Name(), r})
		fh, fn, ih, in = fh+r.Fork.Hits, fn+r.Fork.N, ih+r.Iteration.Hits, in+r.Iteration.N
	}
	rep.Overall.Fork, rep.Overall.Iteration = calibrate.Total(fh, fn), calibrate.Total(ih, in)
	var nh, nn int
	for _, r := range runs {
		for _, cr := range r.Cases {
			nr := calibrate.NightlyRate(cr.ForkScores(), 3, 30)
			nh, nn = nh+nr.Hits, nn+nr.N
		}
	}
	rep.Nightly = calibrate.Total(nh, nn)
	rep.Pair = pairResults(o, cf, pair, runs)
	var md bytes.Buffer
	writeCalibrationMD(&md, a.name+" "+strings.Join(a.args, " "), s.check.Note(), rep)
	a.stdout.Write(md.Bytes())
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return failedError{fmt.Sprintf("encoding calibration.json: %v", err)}
	}
	for name, data := range map[string][]byte{"calibration.md": md.Bytes(), "calibration.json": append(js, '\n')} {
		if err := report.WriteFileAtomic(filepath.Join(out, name), data); err != nil {
			return failedError{err.Error()}
		}
	}
	fmt.Fprintf(a.stdout, "\ncalibration: %s (raw results: %s)\n", filepath.Join(out, "calibration.md"), filepath.Join(out, "aa.txt"))
	return nil
}

// pairResults are how often --pair's change is detected at 2 to 10
// forks a side.
func pairResults(o engine.Options, cf *calFlags, pair *calPair, runs []*result.Run) []calPairResult {
	if pair == nil {
		return nil
	}
	var out []calPairResult
	for _, cr := range runs[0].Cases {
		if param(cr.Case.Params, pair.name) != pair.base {
			continue
		}
		for j, other := range runs[1].Cases {
			if param(other.Case.Params, pair.name) != pair.changed || other.Case.Benchmark != cr.Case.Benchmark || !sameBut(cr.Case.Params, other.Case.Params, pair.name) {
				continue
			}
			pr := calPairResult{Base: cr.Case.Name(), Changed: other.Case.Name()}
			for _, g := range []int{2, 3, 4, 5, 6, 8, 10} {
				if o.Forks/g == 0 {
					break
				}
				r := calibrate.Detect(cr.ForkScores(), runs[1].Cases[j].ForkScores(), g, cf.alpha)
				pr.ByForks = append(pr.ByForks, struct {
					Forks int
					calibrate.Rate
					MinP float64
				}{g, r, compare.MinP(g, g)})
			}
			out = append(out, pr)
		}
	}
	return out
}

// param is the value of a case's parameter ("" when it has none).
func param(ps result.Params, name string) string {
	v, _ := ps.Get(name)
	return v
}

// sameBut reports whether a and b hold the same values but for name.
func sameBut(a, b result.Params, name string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || (a[i].Name != name && a[i].Value != b[i].Value) {
			return false
		}
	}
	return true
}

func pct(r calibrate.Rate) string {
	return fmt.Sprintf("%.1f %% [%.1f–%.1f] (%d of %d)", 100*r.Rate, 100*r.Lo, 100*r.Hi, r.Hits, r.N)
}

// writeCalibrationMD renders the report as Markdown.
func writeCalibrationMD(w io.Writer, command, hostNote string, r calReport) {
	fmt.Fprintf(w, "# A/A calibration on machine %s\n\n", r.MachineID)
	fmt.Fprintf(w, "`%s`\n\nenv-id %s, host-pinned %s (%s); warmup %s, measure %s; α = %g; %d comparisons of %d forks a side per benchmark, from %d forks a side of one binary against itself, interleaved.\n\n",
		command, r.EnvID, r.HostPinned, hostNote, r.Warmup, r.Measure, r.Alpha, r.Trials, r.Group, r.Trials*r.Group)
	fmt.Fprintf(w, "False positives: comparisons significant at α although both sides ran the same binary, with their exact 95 %% binomial intervals. *fork-level* counts one sample per fork (the median of its iterations), as compare and ab do; *iteration-level* counts one per iteration, as benchstat does, on the same data.\n\n")
	fmt.Fprintf(w, "| Benchmark | fork-level false positives | iteration-level false positives | spread of forks (CV) | smallest change detectable at %d forks a side (80 %% power) |\n|:--|--:|--:|--:|--:|\n", r.Group)
	for _, b := range r.Benchmarks {
		fmt.Fprintf(w, "| %s | %s | %s | %.2f %% | %.2f %% |\n", b.Name, pct(b.Fork), pct(b.Iteration), 100*b.ForkCV, 100*b.MDE)
	}
	fmt.Fprintf(w, "| **all** | %s | %s | | |\n", pct(r.Overall.Fork), pct(r.Overall.Iteration))
	if r.Nightly.N == 0 {
		fmt.Fprintf(w, "\nnightly: too few forks for a flat series of 30 nights of 3 forks (90 a side) to test nightly's rule on.\n")
	} else {
		fmt.Fprintf(w, "\nnightly: %s of the flat series of 30 nights of 3 forks, made of these forks (nothing changed along them), raised an alarm.\n", pct(r.Nightly))
	}
	for _, p := range r.Pair {
		fmt.Fprintf(w, "\n## A known change: %s (A) against %s (B)\n\n| forks a side | detected at α = %g | smallest p the test can give |\n|--:|--:|--:|\n", p.Base, p.Changed, r.Alpha)
		for _, g := range p.ByForks {
			fmt.Fprintf(w, "| %d | %s | %.3f |\n", g.Forks, pct(g.Rate), g.MinP)
		}
	}
}
