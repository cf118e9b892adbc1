package benchctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/calibrate"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/measure"
	"github.com/ledgerbench/ledgerbench/internal/session"
	"github.com/ledgerbench/ledgerbench/internal/verdict"
)

// calFlags are the flags of calibrate beyond the run flags.
type calFlags struct {
	trials, group    int
	alpha, minChange float64
	pair, from       string
	// plant is --plant: side B's planted slowdown (0.02 for 2%).
	plantArg string
	plant    float64
	// detect is --detect: replay ab --detect on the rounds (0.02 for 2%),
	// stopping at --budget's worth of rounds.
	detectArg string
	detect    float64
	budget    time.Duration
}

func (a *app) calibrateCmd() *cobra.Command {
	var f runFlags
	var cf calFlags
	c := &cobra.Command{
		Use:   "calibrate [run flags] [--trials N] [--group G] [--pair PARAM=BASE,CHANGED]",
		Short: "Measure this machine's false-alarm rate and power: many A/A (or known-change) comparisons of this binary against itself",
		Long: `calibrate runs the selected benchmarks with this very binary on both sides of an A/B run (A and B),
as ab runs them (interleaved, or with --duet both at once), --trials × --group rounds of one fork a
side. It then splits the rounds into --trials independent comparisons of --group rounds. For each
benchmark and overall it reports how many comparisons come out significant at --alpha although
nothing changed: by pairs of rounds (ab's test), by one sample per fork ignoring the rounds (the
Mann-Whitney U test) and by one sample per iteration (as benchstat counts), each rate with its exact
binomial interval; the spread of one round's ratio, the width of the interval of the change and the
smallest change detectable at --group rounds; how often the suite as a whole looks changed, row by
row and at the false-discovery rate ab's exit status uses; and how often nightly's change-point rule
alarms on flat series made of these forks (3 a night, 30 nights a series).

--pair PARAM=BASE,CHANGED runs, where side A runs a case at PARAM=BASE, the same case at
PARAM=CHANGED on side B, in the same round (in a duet, at the same time). With a parameter whose
values differ by a known amount of work it reports, for comparisons of 3 to 40 rounds, how often the
change is found (paired and unpaired), the width of its interval and the machine time a comparison
takes, and how many rounds a 2 % change needs for 90 % power.

--plant P% makes side B slower by P % in any benchmark, a real cache benchmark as well as a loop of
known length: each measured window of B, once its ops are done, spins on the clock for P % of the time
they took, inside the window, and that time is measured with them (ns/op and ops/s move by P %;
sample-time percentiles do not). It reports as --pair does, each case against itself planted. It
exists to calibrate; nothing else plants. DIR/calibration.md and
DIR/calibration.json hold the figures, and DIR/aa.txt the raw results.

--detect P% also replays ab --detect P% --budget on the same rounds, in order: each comparison
starts with --group rounds, is refused when its plan needs more rounds than --budget holds, and
otherwise takes one more round at a time until it can detect P % (or the budget's rounds are
spent). It reports how often those comparisons are significant (false positives in an A/A, detections
of a known change), how many were refused, and the rounds they took.`,
		Example: fmt.Sprintf(`  %[1]s calibrate --suite SUITE --trials 200 --group 5 --warmup 1x20ms --measure 3x20ms
  %[1]s calibrate --bench Work --pair extra=0,5 --trials 100`, a.name),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runCalibrate(cmd, &f, &cf) },
	}
	a.addRunFlags(c, &f, engine.DefaultOptions())
	_ = c.Flags().MarkHidden("prof") // refused by calibrate: profile with run --prof
	fl := c.Flags()
	fl.IntVar(&cf.trials, "trials", 200, "A/A comparisons per benchmark")
	fl.IntVar(&cf.group, "group", 5, "forks a side per comparison")
	fl.Float64Var(&cf.alpha, "alpha", 0.05, "significance level")
	fl.Float64Var(&cf.minChange, "min-change", compare.DefaultMinChange, "the margin of the verdicts, in percent, as ab's --min-change")
	fl.StringVar(&cf.pair, "pair", "", "PARAM=BASE,CHANGED: side B runs PARAM=CHANGED where side A runs PARAM=BASE; measure how often the change is detected")
	fl.StringVar(&cf.plantArg, "plant", "", "P%: side B measures a known slowdown of P % (at most 100 %) of every benchmark; report how often it is detected")
	fl.BoolVar(&f.duet, "duet", false, "run both sides of each round at the same time, each on half of the CPUs, as ab --duet does")
	fl.StringVar(&cf.detectArg, "detect", "", "P%: also replay ab --detect P% --budget on the rounds and report its error rate and rounds")
	fl.StringVar(&cf.from, "from", "", "report again on the raw results (aa.txt) of an earlier calibrate run, measuring nothing; --pair (any value) reports it as a known change")
	return c
}

// runCalibrate checks calibrate's flags and measures, or with --from
// reports again on earlier results.
func (a *app) runCalibrate(cmd *cobra.Command, f *runFlags, cf *calFlags) error {
	if err := cf.parseDetect(f); err != nil {
		return err
	}
	if cf.from != "" {
		return a.calibrateFrom(f, cf)
	}
	o, cases, err := a.plan(cmd, f)
	if err != nil {
		return err
	}
	if err := forksWithoutProfiles(o, "calibrate compares forks: --forks does not apply (it runs --trials × --group)",
		"--prof is not supported by calibrate"); err != nil && cmd.Flags().Changed("prof") {
		return err
	}
	if cmd.Flags().Changed("forks") || o.Precision > 0 {
		return usageError(errors.New("--forks and --precision do not apply to calibrate: it runs --trials × --group forks a side"))
	}
	switch {
	case cf.trials < 1 || cf.group < verdict.MinSamples:
		return usageError(fmt.Errorf("--trials %d --group %d: want at least 1 comparison of at least %d forks a side", cf.trials, cf.group, verdict.MinSamples))
	case cf.trials*cf.group > engine.MaxForks:
		return usageError(fmt.Errorf("--trials %d × --group %d = %d forks a side: at most %d", cf.trials, cf.group, cf.trials*cf.group, engine.MaxForks))
	}
	if err := checkStats(cf.alpha, cf.minChange); err != nil {
		return err
	}
	o.Forks = cf.trials * cf.group
	pair, err := parsePair(cf.pair, cases)
	if err != nil {
		return usageError(err)
	}
	if cf.plantArg != "" {
		if cf.plant, err = percentArg("--plant", cf.plantArg, 100*measure.MaxPlant, true); err != nil {
			return usageError(err)
		}
	}
	if pair != nil && cf.plant != 0 {
		return usageError(errors.New("--pair and --plant: one known change at a time"))
	}
	return a.doCalibrate(cmd, o, cases, f, cf, pair)
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
	// Mode is how the sides ran (interleaved or duet), and RoundSeconds
	// the machine time of one round (a fork a side, every case), measured.
	Mode         string
	RoundSeconds float64
	// Planted is side B's planted slowdown (--plant), 0 without.
	Planted    float64    `json:",omitempty"`
	Benchmarks []calBench `json:",omitempty"`
	Overall    struct{ Paired, Rejected, Fork, Iteration calibrate.Rate }
	// MinChange is the verdicts' margin, in percent.
	MinChange float64
	// Suite counts the A/A comparisons of Group rounds of every benchmark
	// at once that looked changed: row by row at α, as ab's verdicts call
	// a row changed, and as ab exits 1.
	Suite *calibrate.SuiteRates `json:",omitempty"`
	// Nightly counts the flat series of 30 nights of 3 forks, made of
	// the A/A forks, on which nightly's rule raises an alarm.
	Nightly calibrate.Rate
	Pair    []calPairResult `json:",omitempty"`
}

type calBench struct {
	Name string
	calibrate.AAResult
	// Paired is the A/A by pairs of rounds, as ab compares, and
	// PairSpread the standard deviation of one round's log ratio.
	Paired     calibrate.Paired
	PairSpread float64
	// Shared is how much of their iterations' noise the sides share.
	Shared calibrate.Shared
	// Adaptive is the replay of ab --detect (with --detect).
	Adaptive *calibrate.Adaptive `json:",omitempty"`
}

type calPairResult struct {
	Base, Changed string
	// Change is the change over all rounds, as one comparison finds it.
	Change     float64
	PairSpread float64
	Shared     calibrate.Shared
	ByRounds   []calRounds
	// For90At2 is the rounds a comparison needs, at this spread, to find
	// a 2 % change with 90 % power (0: more than verdict.MaxPairs), and
	// Seconds90At2 their machine time.
	For90At2     int
	Seconds90At2 float64
	// Adaptive is the replay of ab --detect (with --detect).
	Adaptive *calibrate.Adaptive `json:",omitempty"`
}

type calRounds struct {
	calibrate.Paired
	Seconds float64 // machine time of one comparison
}

func (a *app) doCalibrate(cmd *cobra.Command, o engine.Options, cases []engine.Case, f *runFlags, cf *calFlags, pair *calPair) error {
	s, err := a.prepare(cmd.Context(), &o, f)
	if err != nil {
		return err
	}
	defer s.Release()
	if err := ab.CheckDuet(o); err != nil {
		return err
	}
	out, err := f.outDir("calibration")
	if err != nil {
		return err
	}
	exe, err := a.env().SelfExecutable()
	if err != nil {
		return err
	}
	self := engine.Program{Executable: exe}
	sides := []engine.Side{{Name: "A", Launch: self}, {Name: "B", Launch: self}}
	what := "A/A: this binary on both sides"
	var notes []string
	if cf.plant != 0 {
		sides[1].Plant = cf.plant
		what = fmt.Sprintf("side B planted +%g %%", 100*cf.plant)
		notes = append(notes, fmt.Sprintf("planted=%g: side B's measured windows spin on the clock for %g %% of their ops' time (calibrate --plant)", cf.plant, 100*cf.plant))
	}
	if pair != nil {
		cases, sides[1].Cases = pair.split(cases)
		what = fmt.Sprintf("side B runs %s=%s where side A runs %s=%s", pair.name, pair.changed, pair.name, pair.base)
	}
	a.say("%d cases × %d forks a side (%s), warmup %s, measure %s, %s → %s", len(cases), o.Forks, what, o.Warmup, o.Measure, modeName(o), out)
	// Thousands of fork logs stay out of the results directory.
	logs, err := os.MkdirTemp("", "benchctl-calibrate-logs-")
	if err != nil {
		return failedError(err.Error())
	}
	r, err := s.Measure(cmd.Context(), &session.Measurement{Options: o, Cases: cases, Dir: a.dir, LogDir: logs, Sides: sides, Notes: notes,
		Out: session.ResultsFile{Path: filepath.Join(out, "aa.txt"), Put: session.ReplaceFile}})
	keepLogs(a, logs, r, err)
	if err != nil {
		return err
	}
	if r.Interrupted != nil {
		// Rates over the forks that ran would pass for the asked-for run.
		a.say("no calibration report: the run was interrupted; the forks that ran are in %s", r.Path)
		return r.Interrupted
	}
	rep := newCalReport(r.Header, cf, o.Warmup.String(), o.Measure.String(), modeName(o), r.Runs[0].End.Sub(r.Runs[0].Start).Seconds()/float64(o.Forks))
	rep.Planted = cf.plant
	if err := a.writeCalibration(rep, cf, pair != nil || cf.plant != 0, s.Check.Note(), r.Runs, out); err != nil {
		return err
	}
	return r.Outcome(nil, out)
}

// calibrateFrom reports again on an earlier run's raw results, into the
// directory that holds them.
func (a *app) calibrateFrom(f *runFlags, cf *calFlags) error {
	runs, h, roundSeconds, err := readCalibration(cf.from)
	if err != nil {
		return usageError(fmt.Errorf("--from: %w", err))
	}
	data, _ := os.ReadFile(cf.from)
	warmup, measure, mode := "?", "?", "interleaved"
	if m := regexp.MustCompile(`warmup=(\S+) measure=(\S+)`).FindSubmatch(data); m != nil {
		warmup, measure = string(m[1]), string(m[2])
	}
	if bytes.Contains(data, []byte("\n# benchctl: duet: ")) {
		mode = "duet"
	}
	rounds := roundsOf(runs[0])
	if cf.group < verdict.MinSamples || rounds/cf.group == 0 {
		return usageError(fmt.Errorf("--group %d: %s holds %d rounds", cf.group, cf.from, rounds))
	}
	cf.trials = rounds / cf.group
	rep := newCalReport(h, cf, warmup, measure, mode, roundSeconds)
	out := f.out
	if out == "" {
		out = filepath.Dir(cf.from)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return failedError(err.Error())
	}
	if m := regexp.MustCompile(`\n# benchctl: planted=(\S+):`).FindSubmatch(data); m != nil {
		rep.Planted, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	return a.writeCalibration(rep, cf, cf.pair != "" || rep.Planted != 0, "as recorded in "+cf.from, runs, out)
}

// newCalReport is the report's heading: the machine, the plan and the
// machine time of a round.
func newCalReport(h report.Header, cf *calFlags, warmup, measure, mode string, roundSeconds float64) calReport {
	return calReport{MachineID: h.MachineID, EnvID: h.EnvID, HostPinned: h.HostPinned, Alpha: cf.alpha, MinChange: cf.minChange,
		Trials: cf.trials, Group: cf.group, Warmup: warmup, Measure: measure, Mode: mode, RoundSeconds: roundSeconds}
}

func modeName(o engine.Options) string {
	if o.Duet {
		return "duet"
	}
	return "interleaved"
}

// split returns the cases of side A, those at the base value with a
// counterpart at the changed value, and side B's counterparts.
func (p *calPair) split(cases []engine.Case) (base, changed []engine.Case) {
	for _, c := range cases {
		if param(c.Params, p.name) != p.base {
			continue
		}
		for _, o := range cases {
			if param(o.Params, p.name) == p.changed && o.Bench == c.Bench && sameBut(c.Params, o.Params, p.name) {
				base, changed = append(base, c), append(changed, o)
				break
			}
		}
	}
	return base, changed
}

// writeCalibration computes the A/A rates (or, with --pair, the
// detection rates) of the two sides' forks and writes calibration.md and
// calibration.json.
func (a *app) writeCalibration(rep calReport, cf *calFlags, pair bool, hostNote string, runs []*result.Run, out string) error {
	if pair {
		rep.Pair = rep.pairResults(cf, runs)
	} else {
		rep.aa(cf, runs)
	}
	var md bytes.Buffer
	writeCalibrationMD(&md, a.name+" "+strings.Join(a.args, " "), hostNote, rep)
	a.stdout.Write(md.Bytes())
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return failedError(fmt.Sprintf("encoding calibration.json: %v", err))
	}
	for name, data := range map[string][]byte{"calibration.md": md.Bytes(), "calibration.json": append(js, '\n')} {
		if err := report.WriteFileAtomic(filepath.Join(out, name), data); err != nil {
			return failedError(err.Error())
		}
	}
	raw := filepath.Join(out, "aa.txt")
	if cf.from != "" {
		raw = cf.from
	}
	fmt.Fprintf(a.stdout, "\ncalibration: %s (raw results: %s)\n", filepath.Join(out, "calibration.md"), raw)
	return nil
}

// aa fills in the A/A figures: per benchmark, overall, across the suite
// and along nightly's series.
func (rep *calReport) aa(cf *calFlags, runs []*result.Run) {
	var ph, rh, pn, fh, fn, ih, in int
	var suite []calibrate.Case
	o := cf.options()
	for i, cr := range runs[0].Cases {
		x, y := calibrate.Rounds(cr, runs[1].Cases[i])
		b := calBench{Name: cr.Case.Name(), AAResult: calibrate.AA(x, y, cf.group, cf.alpha),
			Paired: calibrate.PairedRounds(x, y, cf.group, o, 0), PairSpread: calibrate.PairSpread(x, y),
			Shared: calibrate.SharedNoise(x, y), Adaptive: rep.adaptive(cf, len(runs[0].Cases), x, y, 0)}
		rep.Benchmarks = append(rep.Benchmarks, b)
		ph, rh, pn = ph+b.Paired.Hits.Hits, rh+b.Paired.Rejected.Hits, pn+b.Paired.Hits.N
		fh, fn, ih, in = fh+b.Fork.Hits, fn+b.Fork.N, ih+b.Iteration.Hits, in+b.Iteration.N
		suite = append(suite, calibrate.Case{Name: b.Name, A: x, B: y})
	}
	rep.Overall.Paired, rep.Overall.Rejected = calibrate.Total(ph, pn), calibrate.Total(rh, pn)
	rep.Overall.Fork, rep.Overall.Iteration = calibrate.Total(fh, fn), calibrate.Total(ih, in)
	if len(suite) > 1 {
		r := calibrate.Suite(suite, cf.group, o)
		rep.Suite = &r
	}
	var nh, nn int
	for _, r := range runs {
		for _, cr := range r.Cases {
			nr := calibrate.NightlyRate(cr.ForkScores(), 3, 30)
			nh, nn = nh+nr.Hits, nn+nr.N
		}
	}
	rep.Nightly = calibrate.Total(nh, nn)
}

// calRoundCounts are the comparison sizes, in rounds, --pair reports.
var calRoundCounts = []int{3, 4, 5, 6, 8, 10, 15, 20, 30, 40}

// pairResults are how often --pair's change is detected at 3 to 40
// rounds a comparison, in the direction all rounds together find it.
func (rep *calReport) pairResults(cf *calFlags, runs []*result.Run) []calPairResult {
	roundSeconds := rep.RoundSeconds
	var out []calPairResult
	for i, cr := range runs[0].Cases {
		other := runs[1].Cases[i]
		x, y := calibrate.Rounds(cr, other)
		pr := calPairResult{Base: cr.Case.Name(), Changed: other.Case.Name(), PairSpread: calibrate.PairSpread(x, y),
			Shared: calibrate.SharedNoise(x, y)}
		all := calibrate.PairedRounds(x, y, min(len(x), len(y)), cf.options(), 0)
		dir := 1
		if all.Hits.N > 0 {
			pr.Change = all.Change - 1
			if all.Change < 1 {
				dir = -1
			}
		}
		for _, g := range calRoundCounts {
			if g < verdict.MinSamples {
				continue // no interval
			}
			if min(len(x), len(y))/g == 0 {
				break
			}
			pr.ByRounds = append(pr.ByRounds, calRounds{calibrate.PairedRounds(x, y, g, cf.options(), dir), float64(g) * roundSeconds})
		}
		pr.Adaptive = rep.adaptive(cf, len(runs[0].Cases), x, y, dir)
		pr.For90At2 = verdict.Pairs(pr.PairSpread, 0.02, cf.alpha, 0.9)
		pr.Seconds90At2 = float64(pr.For90At2) * roundSeconds
		out = append(out, pr)
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
	fmt.Fprintf(w, "# Calibration on machine %s\n\n", r.MachineID)
	fmt.Fprintf(w, "`%s`\n\nenv-id %s, host-pinned %s (%s); warmup %s, measure %s; α = %g; mode %s: %.2f s of machine time a round (one fork a side of every case).\n\n",
		command, r.EnvID, r.HostPinned, hostNote, r.Warmup, r.Measure, r.Alpha, r.Mode, r.RoundSeconds)
	if len(r.Benchmarks) > 0 {
		writeAAMD(w, r)
	}
	for _, p := range r.Pair {
		if r.Planted != 0 {
			fmt.Fprintf(w, "## A known change: %s, side B planted +%g %%\n\n", p.Base, 100*r.Planted)
		} else {
			fmt.Fprintf(w, "## A known change: %s (A) against %s (B)\n\n", p.Base, p.Changed)
		}
		fmt.Fprintf(w, "All rounds together: %+.2f %%; one round's log ratio spreads %.2f %%. A 2 %% change needs %d rounds for 90 %% power at this spread (%.0f s of machine time).\n\n",
			100*p.Change, 100*p.PairSpread, p.For90At2, p.Seconds90At2)
		fmt.Fprintf(w, "%s\n\n", sharedMD(p.Shared))
		fmt.Fprintf(w, "Detected: comparisons that found the change in its direction, with their exact 95 %% binomial intervals; *ab* is ab's verdict *changed*, decided by the very function that decides ab's rows (margin ±%g %%), *unpaired* the fork-level Mann-Whitney U test on the same forks. Interval: the mean width of the change's %g %% interval.\n\n", r.MinChange, 100*(1-r.Alpha))
		fmt.Fprintf(w, "| rounds | detected, ab | detected, unpaired | interval, ab | interval, unpaired | smallest detectable (80 %%) | machine time |\n|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, g := range p.ByRounds {
			fmt.Fprintf(w, "| %d | %s | %s | ±%.2f %% | ±%.2f %% | %.2f %% | %.1f s |\n", g.Rounds, pct(g.Hits), pct(g.Unpaired), 50*g.Width, 50*g.UnpairedWidth, 100*g.MDE, g.Seconds)
		}
		fmt.Fprintln(w)
	}
	writeAdaptiveMD(w, r)
}

// sharedMD says how much of the iterations' noise the sides share.
func sharedMD(s calibrate.Shared) string {
	if s.N < calibrate.MinSharedPairs {
		return fmt.Sprintf("Too few iterations (%d pairs) to say how much of their noise the sides share.", s.N)
	}
	return fmt.Sprintf("Within a round, the two sides' iterations correlate %.2f (%d pairs; each side's iterations spread %.2f %% and %.2f %% around their fork's mean): %s (--duet).",
		s.Corr, s.N, 100*s.SpreadA, 100*s.SpreadB, sharedMeaning)
}

// sharedMeaning is what the shared figure means, in the report's words.
const sharedMeaning = "the share of an iteration ratio's variance that running both sides at once removes, near 0 unless they do"

// sharedCell is the A/A table's shared column.
func sharedCell(s calibrate.Shared) string {
	if s.N < calibrate.MinSharedPairs {
		return "–"
	}
	return fmt.Sprintf("%.2f", s.Corr)
}

// writeAAMD renders the A/A figures.
func writeAAMD(w io.Writer, r calReport) {
	fmt.Fprintf(w, "%d comparisons of %d rounds per benchmark, from %d forks a side of one binary against itself.\n\n", r.Trials, r.Group, r.Trials*r.Group)
	fmt.Fprintf(w, "False positives: comparisons that found a change although both sides ran the same binary, with their exact 95 %% binomial intervals. *ab: changed* is ab's verdict, decided by the very function that decides ab's rows (the rounds written as an A/B file and read back by compare, the rounds' forks paired, margin ±%g %%); *ab: rejected* its test's rejections at α whatever the margin; *fork-level* the Mann-Whitney U test on one sample per fork (the median of its iterations); *iteration-level* the same test on one sample per iteration, as benchstat counts, on the same data.\n\n", r.MinChange)
	fmt.Fprintf(w, "*Shared* is the correlation of the two sides' iterations within a round (each iteration's log score less its fork's mean, paired by index): %s (`--duet`).\n\n", sharedMeaning)
	fmt.Fprintf(w, "| Benchmark | ab: changed | ab: rejected | fork-level false positives | iteration-level false positives | spread of a round's ratio | interval, ab | smallest change detectable at %d rounds (80 %% power) | shared |\n|:--|--:|--:|--:|--:|--:|--:|--:|--:|\n", r.Group)
	for _, b := range r.Benchmarks {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.2f %% | ±%.2f %% | %.2f %% | %s |\n", b.Name, pct(b.Paired.Hits), pct(b.Paired.Rejected), pct(b.Fork), pct(b.Iteration), 100*b.PairSpread, 50*b.Paired.Width, 100*b.Paired.MDE, sharedCell(b.Shared))
	}
	fmt.Fprintf(w, "| **all** | %s | %s | %s | %s | | | | |\n", pct(r.Overall.Paired), pct(r.Overall.Rejected), pct(r.Overall.Fork), pct(r.Overall.Iteration))
	if r.Suite != nil {
		fmt.Fprintf(w, "\nThe suite as a whole (every benchmark's comparison of the same rounds decided at once, as ab decides a suite) looked changed in %s of the A/As row by row at α, was called changed by ab's verdicts (the false-discovery rate α across its %d rows, then the margin) in %s, and made ab exit 1 (a change for the worse) in %s.\n",
			pct(r.Suite.PerRow), len(r.Benchmarks), pct(r.Suite.Changed), pct(r.Suite.Exit))
	}
	if r.Nightly.N == 0 {
		fmt.Fprintf(w, "\nnightly: too few forks for a flat series of 30 nights of 3 forks (90 a side) to test nightly's rule on.\n")
	} else {
		fmt.Fprintf(w, "\nnightly: %s of the flat series of 30 nights of 3 forks, made of these forks (nothing changed along them), raised an alarm.\n", pct(r.Nightly))
	}
	fmt.Fprintln(w)
}

// options are the options under which ab decides its rows, at
// calibrate's --alpha and --min-change: calibrate decides its comparisons
// through the same function.
func (cf *calFlags) options() compare.Options {
	return compare.ABOptions(cf.alpha, cf.minChange)
}

// parseDetect reads --detect; the replay stops at --budget's rounds.
func (cf *calFlags) parseDetect(f *runFlags) error {
	if cf.detectArg == "" {
		return nil
	}
	d, err := percentArg("--detect", cf.detectArg, 100, false)
	if err != nil {
		return usageError(err)
	}
	cf.detect, cf.budget = d, f.budget
	return nil
}

// adaptive replays ab --detect on x and y (nil without --detect): a
// comparison may take the rounds of one case that --budget holds, at the
// machine time a round of the cases took here.
func (rep *calReport) adaptive(cf *calFlags, cases int, x, y calibrate.Forks, dir int) *calibrate.Adaptive {
	if cf.detect == 0 || rep.RoundSeconds <= 0 {
		return nil
	}
	capRounds := max(cf.group, int(cf.budget.Seconds()/(rep.RoundSeconds/float64(cases))))
	r := calibrate.AdaptiveRounds(x, y, cf.group, capRounds, cf.detect, cf.options(), dir)
	return &r
}

// writeAdaptiveMD renders the replays of ab --detect of every benchmark
// or known change that has one.
func writeAdaptiveMD(w io.Writer, r calReport) {
	type row struct {
		name string
		a    *calibrate.Adaptive
	}
	var rows []row
	for _, b := range r.Benchmarks {
		rows = append(rows, row{b.Name, b.Adaptive})
	}
	for _, p := range r.Pair {
		rows = append(rows, row{p.Base, p.Adaptive})
	}
	if len(rows) == 0 || rows[0].a == nil {
		return
	}
	what := "false positives"
	if len(r.Pair) > 0 {
		what = "detected"
	}
	a := rows[0].a
	fmt.Fprintf(w, "## Replayed as ab --detect %g%%\n\nThe same rounds, in order, as ab --detect %g%% takes them: %d rounds first, then one at a time until the comparison can detect %g %% at 80 %% power, at most %d rounds (the budget's, at this run's time a round); a comparison whose plan needs more is refused, as ab refuses it (exit 2). *%s* counts, of the comparisons that ran, those ab's verdict called changed, with the exact 95 %% binomial interval.\n\n",
		100*a.Detect, 100*a.Detect, a.First, 100*a.Detect, a.Cap, what)
	fmt.Fprintf(w, "| benchmark | %s | refused | stopped at the cap | rounds, mean | rounds, most |\n|:--|--:|--:|--:|--:|--:|\n", what)
	for _, x := range rows {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %.1f | %d |\n", x.name, pct(x.a.Hits), x.a.Refused, x.a.AtCap, x.a.MeanRounds, x.a.MostRounds)
	}
	fmt.Fprintln(w)
}
