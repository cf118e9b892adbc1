package benchctl

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/internal/calibrate"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// calFlags are the flags of calibrate beyond the run flags that are no
// option as given: the percentages of --plant and --detect.
type calFlags struct{ plant, detect string }

func (a *app) calibrateCmd() *cobra.Command {
	var f runFlags
	var cf calFlags
	co := calibrate.Defaults()
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
of a known change), how many were refused, and the rounds they took.

--until-decided N also replays ab --until-decided on the same rounds, in order: every benchmark's
row at once, decided after each round from the third by the anytime-valid test as ab decides them; a
decided row gets no more rounds, and a comparison ends when all rows are decided or one has N rounds.
It reports per row how often it was called changed (false positives in an A/A, detections of a known
change, beside the rounds a fixed design needs at the same power), same or undecided, and the rounds
it took; in an A/A, how often any row of the suite was called changed.`,
		Example: fmt.Sprintf(`  %[1]s calibrate --suite SUITE --trials 200 --group 5 --warmup 1x20ms --measure 3x20ms
  %[1]s calibrate --bench Work --pair extra=0,5 --trials 100`, a.name),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runCalibrate(cmd, &f, &cf, co) },
	}
	a.addRunFlags(c, &f, engine.DefaultOptions())
	_ = c.Flags().MarkHidden("prof") // refused by calibrate: profile with run --prof
	fl := c.Flags()
	fl.IntVar(&co.Trials, "trials", co.Trials, "A/A comparisons per benchmark")
	fl.IntVar(&co.Group, "group", co.Group, "forks a side per comparison")
	fl.Float64Var(&co.Alpha, "alpha", co.Alpha, "significance level")
	fl.Float64Var(&co.MinChange, "min-change", co.MinChange, "the margin of the verdicts, in percent, as ab's --min-change")
	fl.StringVar(&co.Pair, "pair", "", "PARAM=BASE,CHANGED: side B runs PARAM=CHANGED where side A runs PARAM=BASE; measure how often the change is detected")
	fl.StringVar(&cf.plant, "plant", "", "P%: side B measures a known slowdown of P % (at most 100 %) of every benchmark; report how often it is detected")
	fl.BoolVar(&f.duet, "duet", false, "run both sides of each round at the same time, each on half of the CPUs, as ab --duet does")
	fl.StringVar(&cf.detect, "detect", "", "P%: also replay ab --detect P% --budget on the rounds and report its error rate and rounds")
	fl.IntVar(&co.UntilDecided, "until-decided", 0, "N: also replay ab --until-decided on the rounds, every benchmark's rows at once, each comparison stopping at any round up to N, and report its error rates and rounds")
	fl.StringVar(&co.From, "from", "", "report again on the raw results (aa.txt) of an earlier calibrate run, measuring nothing; --pair (any value) reports it as a known change")
	return c
}

// runCalibrate binds calibrate's flags into its options, calibrates (or
// with --from reports again on earlier results) and prints the report.
func (a *app) runCalibrate(cmd *cobra.Command, f *runFlags, cf *calFlags, co calibrate.Options) error {
	var err error
	if cf.detect != "" {
		if co.Detect, err = percentArg("--detect", cf.detect, 100, false); err != nil {
			return usageError(err)
		}
		co.Budget = f.budget
	}
	if cf.plant != "" {
		if co.Plant, err = percentArg("--plant", cf.plant, 100*harness.MaxPlant, true); err != nil {
			return usageError(err)
		}
	}
	co.Dir, co.Out, co.Host = a.dir, f.out, f.hostOptions()
	if co.From == "" {
		if co.Engine, co.Cases, err = a.plan(cmd, f); err != nil {
			return err
		}
		if err := forksWithoutProfiles(co.Engine, "calibrate compares forks: --forks does not apply (it runs --trials × --group)",
			"--prof is not supported by calibrate"); err != nil && cmd.Flags().Changed("prof") {
			return err
		}
		if cmd.Flags().Changed("forks") || co.Engine.Precision > 0 {
			return usageError(errors.New("--forks and --precision do not apply to calibrate: it runs --trials × --group forks a side"))
		}
	}
	rep, err := calibrate.Run(cmd.Context(), a.env(), co)
	if rep != nil {
		rep.Markdown(a.stdout)
		if rep.File != "" {
			fmt.Fprintf(a.stdout, "\ncalibration: %s (raw results: %s)\n", rep.File, rep.Raw)
		}
	}
	return err
}
