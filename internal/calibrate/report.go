package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Report is calibration.json, and what calibration.md shows.
type Report struct {
	MachineID, EnvID, HostPinned string
	Alpha                        float64
	Trials, Group                int
	Warmup, Measure              string
	// Mode is how the sides ran (interleaved or duet), and RoundSeconds
	// the machine time of one round (a fork a side, every case), measured.
	Mode         string
	RoundSeconds float64
	// Planted is side B's planted slowdown (--plant), 0 without.
	Planted    float64 `json:",omitempty"`
	Benchmarks []Bench `json:",omitempty"`
	Overall    struct{ Paired, Rejected, Fork, Iteration Rate }
	// MinChange is the verdicts' margin, in percent.
	MinChange float64
	// Suite counts the A/A comparisons of Group rounds of every benchmark
	// at once that looked changed: row by row at α, as ab's verdicts call
	// a row changed, and as ab exits 1.
	Suite *SuiteRates `json:",omitempty"`
	// Nightly counts the flat series of 30 nights of 3 forks, made of
	// the A/A forks, on which nightly's rule raises an alarm.
	Nightly Rate
	Pair    []PairResult `json:",omitempty"`
	// Sequential is the replay of ab --until-decided (with UntilDecided):
	// every benchmark, or every known change, at once.
	Sequential *Sequential `json:",omitempty"`

	// Raw is the raw results reported on, File the calibration.md written.
	Raw, File         string `json:"-"`
	command, hostNote string
}

// Bench is one benchmark's A/A figures.
type Bench struct {
	Name string
	AAResult
	// Paired is the A/A by pairs of rounds, as ab compares, and
	// PairSpread the standard deviation of one round's log ratio.
	Paired     Paired
	PairSpread float64
	// Shared is how much of their iterations' noise the sides share.
	Shared Shared
	// Adaptive is the replay of ab --detect (with --detect).
	Adaptive *Adaptive `json:",omitempty"`
}

// PairResult is one known change's detection figures.
type PairResult struct {
	Base, Changed string
	// Change is the change over all rounds, as one comparison finds it.
	Change     float64
	PairSpread float64
	Shared     Shared
	ByRounds   []RoundsResult
	// For90At2 is the rounds a comparison needs, at this spread, to find
	// a 2 % change with 90 % power (0: more than verdict.MaxPairs), and
	// Seconds90At2 their machine time.
	For90At2     int
	Seconds90At2 float64
	// Adaptive is the replay of ab --detect (with --detect).
	Adaptive *Adaptive `json:",omitempty"`
}

// RoundsResult is a known change's detection at one comparison size.
type RoundsResult struct {
	Paired
	Seconds float64 // machine time of one comparison
}

// compute fills in the A/A figures, or with a known change its
// detection figures, from the two sides' runs.
func (rep *Report) compute(o Options, known bool, runs []*result.Run) error {
	if len(runs) != 2 || len(runs[0].Cases) != len(runs[1].Cases) {
		return session.FailedError{Msg: "a calibration needs two sides with as many cases each"}
	}
	if known {
		rep.Pair = rep.pairResults(o, runs)
		var cases []Case
		for i, p := range rep.Pair {
			x, y := Rounds(runs[0].Cases[i], runs[1].Cases[i])
			dir := 1
			if p.Change < 0 {
				dir = -1
			}
			change := p.Change
			if o.Plant > 0 {
				change = o.Plant
			}
			cases = append(cases, Case{Name: p.Base, A: x, B: y, Dir: dir, Change: change})
		}
		rep.Sequential = o.sequential(cases)
	} else {
		rep.aa(o, runs)
	}
	return nil
}

// Markdown renders the report, as calibration.md holds it.
func (rep *Report) Markdown(w io.Writer) { writeMarkdown(w, rep.command, rep.hostNote, rep) }

// write writes calibration.md and calibration.json into out.
func (rep *Report) write(out string) error {
	var md bytes.Buffer
	rep.Markdown(&md)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return session.FailedError{Msg: fmt.Sprintf("encoding calibration.json: %v", err)}
	}
	for name, data := range map[string][]byte{"calibration.md": md.Bytes(), "calibration.json": append(js, '\n')} {
		if err := report.WriteFileAtomic(filepath.Join(out, name), data); err != nil {
			return session.FailedError{Msg: err.Error()}
		}
	}
	rep.File = filepath.Join(out, "calibration.md")
	return nil
}

// pairParam is Options.Pair: the parameter and its two values.
type pairParam struct{ name, base, changed string }

func parsePair(s string, cases []engine.Case) (*pairParam, error) {
	if s == "" {
		return nil, nil
	}
	name, values, err := engine.ParseOverride(s)
	if err != nil || len(values) != 2 {
		return nil, session.Input("{Pair} %q: want PARAM=BASE,CHANGED", s)
	}
	p := &pairParam{name, values[0], values[1]}
	var base, changed bool
	for _, c := range cases {
		base = base || param(c.Params, name) == p.base
		changed = changed || param(c.Params, name) == p.changed
	}
	if !base || !changed {
		return nil, session.Input("{Pair} %s: the selected cases lack %s=%s or %s=%s (select both, e.g. {Params} %s=%s,%s)", s, name, p.base, name, p.changed, name, p.base, p.changed)
	}
	return p, nil
}

// split returns the cases of side A, those at the base value with a
// counterpart at the changed value, and side B's counterparts.
func (p *pairParam) split(cases []engine.Case) (base, changed []engine.Case) {
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

// aa fills in the A/A figures: per benchmark, overall, across the suite
// and along nightly's series.
func (rep *Report) aa(o Options, runs []*result.Run) {
	var ph, rh, pn, fh, fn, ih, in int
	var suite []Case
	co := o.compareOptions()
	for i, cr := range runs[0].Cases {
		x, y := Rounds(cr, runs[1].Cases[i])
		b := Bench{Name: cr.Case.Name(), AAResult: AA(x, y, o.Group, o.Alpha),
			Paired: PairedRounds(x, y, o.Group, co, 0), PairSpread: PairSpread(x, y),
			Shared: SharedNoise(x, y), Adaptive: rep.adaptive(o, len(runs[0].Cases), x, y, 0)}
		rep.Benchmarks = append(rep.Benchmarks, b)
		ph, rh, pn = ph+b.Paired.Hits.Hits, rh+b.Paired.Rejected.Hits, pn+b.Paired.Hits.N
		fh, fn, ih, in = fh+b.Fork.Hits, fn+b.Fork.N, ih+b.Iteration.Hits, in+b.Iteration.N
		suite = append(suite, Case{Name: b.Name, A: x, B: y})
	}
	rep.Overall.Paired, rep.Overall.Rejected = Total(ph, pn), Total(rh, pn)
	rep.Overall.Fork, rep.Overall.Iteration = Total(fh, fn), Total(ih, in)
	if len(suite) > 1 {
		r := Suite(suite, o.Group, co)
		rep.Suite = &r
	}
	rep.Sequential = o.sequential(suite)
	var nh, nn int
	for _, r := range runs {
		for _, cr := range r.Cases {
			nr := NightlyRate(cr.ForkScores(), 3, 30)
			nh, nn = nh+nr.Hits, nn+nr.N
		}
	}
	rep.Nightly = Total(nh, nn)
}

// calRoundCounts are the comparison sizes, in rounds, --pair reports.
var calRoundCounts = []int{3, 4, 5, 6, 8, 10, 15, 20, 30, 40}

// pairResults are how often --pair's change is detected at 3 to 40
// rounds a comparison, in the direction all rounds together find it.
func (rep *Report) pairResults(o Options, runs []*result.Run) []PairResult {
	roundSeconds := rep.RoundSeconds
	var out []PairResult
	for i, cr := range runs[0].Cases {
		other := runs[1].Cases[i]
		x, y := Rounds(cr, other)
		pr := PairResult{Base: cr.Case.Name(), Changed: other.Case.Name(), PairSpread: PairSpread(x, y),
			Shared: SharedNoise(x, y)}
		all := PairedRounds(x, y, min(len(x), len(y)), o.compareOptions(), 0)
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
			pr.ByRounds = append(pr.ByRounds, RoundsResult{PairedRounds(x, y, g, o.compareOptions(), dir), float64(g) * roundSeconds})
		}
		pr.Adaptive = rep.adaptive(o, len(runs[0].Cases), x, y, dir)
		pr.For90At2 = verdict.Pairs(pr.PairSpread, 0.02, o.Alpha, 0.9)
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

func pct(r Rate) string {
	return fmt.Sprintf("%.1f %% [%.1f–%.1f] (%d of %d)", 100*r.Rate, 100*r.Lo, 100*r.Hi, r.Hits, r.N)
}

// writeMarkdown renders the report as Markdown.
func writeMarkdown(w io.Writer, command, hostNote string, r *Report) {
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
	writeSequentialMD(w, r)
}

// sharedMD says how much of the iterations' noise the sides share.
func sharedMD(s Shared) string {
	if s.N < MinSharedPairs {
		return fmt.Sprintf("Too few iterations (%d pairs) to say how much of their noise the sides share.", s.N)
	}
	return fmt.Sprintf("Within a round, the two sides' iterations correlate %.2f (%d pairs; each side's iterations spread %.2f %% and %.2f %% around their fork's mean): %s (--duet).",
		s.Corr, s.N, 100*s.SpreadA, 100*s.SpreadB, sharedMeaning)
}

// sharedMeaning is what the shared figure means, in the report's words.
const sharedMeaning = "the share of an iteration ratio's variance that running both sides at once removes, near 0 unless they do"

// sharedCell is the A/A table's shared column.
func sharedCell(s Shared) string {
	if s.N < MinSharedPairs {
		return "–"
	}
	return fmt.Sprintf("%.2f", s.Corr)
}

// writeAAMD renders the A/A figures.
func writeAAMD(w io.Writer, r *Report) {
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

// adaptive replays ab --detect on x and y (nil without Detect): a
// comparison may take the rounds of one case that Budget holds, at the
// machine time a round of the cases took here.
func (rep *Report) adaptive(o Options, cases int, x, y Forks, dir int) *Adaptive {
	if o.Detect == 0 || rep.RoundSeconds <= 0 {
		return nil
	}
	capRounds := max(o.Group, int(o.Budget.Seconds()/(rep.RoundSeconds/float64(cases))))
	r := AdaptiveRounds(x, y, o.Group, capRounds, o.Detect, ab.Verdicts(o.Alpha, o.MinChange, true), dir)
	return &r
}

// writeAdaptiveMD renders the replays of ab --detect of every benchmark
// or known change that has one.
func writeAdaptiveMD(w io.Writer, r *Report) {
	type row struct {
		name string
		a    *Adaptive
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
