package benchctl

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/bisect"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

func (a *app) bisectCmd() *cobra.Command {
	var f runFlags
	explain, fleet := "", fleetFlags{}
	b := bisect.Defaults()
	c := &cobra.Command{
		Use:   "bisect --good REV --bad REV [--bench RE] [--cmd ./path/to/main] [run flags] [PACKAGES...]",
		Short: "Find the commit that made a change between two revisions",
		Long: `bisect finds the commit, on the first-parent history from --good (excluded) to --bad, that made
a benchmark slower (or, with --metric and --direction, changed any unit either way).

First it confirms the ends: an A/B of good against bad (as ab runs it, adding rounds until it
could detect a change of --min-change, or --budget is spent) must find the change, with the
verdict "changed". When the interval of that change is wider than ±1/8 of it, the ends
are measured again until it is not (every step's position carries its uncertainty). The row it follows is the changed row of --metric (default: the time,
or the throughput) that changed most in --direction; the others are named. No change: exit 1.
A change the other way: exit 1, naming the direction that bisects it.

Then it searches. Each step builds a commit and runs an A/B of it against the bad end (which
always declares the benchmark, so a commit from before the benchmark existed is measured with the
bad end's declarations overlaid, as ab does), adding rounds until the step's interval is within
a quarter of the whole change or --budget is spent. A step places the commit between the ends as
the share of the good→bad change it already carries: above one half with its whole interval, the
commit has the change (bad); below, it has not (good); otherwise it stays unknown and the search
passes over it to its neighbours, never guessing. A commit that does not build is skipped and
named. The search ends with the culprit when the last good commit and the first bad one are
adjacent, else with the suspects between them.

The culprit is then measured against its parent (its pull-request table), and its change is set
against the whole change: the share it explains says whether the range holds a second change
(bisect the rest: the command is printed).

Builds are cached by tree hash and toolchain in --build-cache, reused by later steps and later
bisections. DIR/bisect.md is the report, DIR/bisect.json the same for machines, and
DIR/steps/NN-COMMIT/ab.txt each step's raw A/B. An interrupt keeps the steps made and says where
it stopped. Exit status 0 when a culprit is found, 1 when none is (no change, ambiguous,
interrupted, a failed fork), 2 on bad usage.`,
		Example: fmt.Sprintf(`  %[1]s bisect --good v1.4.0 --bad main --bench '^BenchmarkReadRange/impl=paged' --duet
  %[1]s bisect --good 4540215f00 --bad e3779b1000 ./internal/cache --bench Get
  %[1]s bisect --good HEAD~20 --bad HEAD --metric B/op`, a.name),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, cases, err := a.planOrPackages(cmd, &f, args)
			if err != nil {
				return err
			}
			b.Cases, b.Packages, b.Engine, b.Budget, b.Dir, b.Out, b.Host = cases, args, o, f.budget, a.dir, f.out, f.hostOptions()
			if b.Explain, err = ab.ParseExplain(explain); err != nil {
				return err
			}
			var closer io.Closer
			if b.Remote, closer, err = a.remote(cmd, fleet); err != nil {
				return err
			}
			if closer != nil {
				defer closer.Close()
			}
			rep, err := bisect.Run(cmd.Context(), a.env(), b)
			if rep != nil {
				rep.Markdown(a.stdout)
			}
			return err
		},
	}
	a.addRunFlags(c, &f, engine.ABOptions())
	bindBisect(c.Flags(), &b, &f, &explain, &fleet)
	return c
}

// bindBisect defines bisect's own flags in fl.
func bindBisect(fl *pflag.FlagSet, b *bisect.Options, f *runFlags, explain *string, fleet *fleetFlags) {
	fl.Lookup("budget").Usage = "the most machine time one step (the confirmation, a commit, the culprit's own A/B) may spend adding rounds"
	fl.Lookup("prof").Usage = "instructions: count the culprit's and its parent's instructions under callgrind and explain the culprit by them too (bisect takes no other profiler)"
	fl.StringVar(&b.Good, "good", "", "a revision without the change")
	fl.StringVar(&b.Bad, "bad", "", "a revision with the change, on whose first-parent history good lies")
	fl.StringVar(&b.Program, "cmd", "", "the benchmark program's main package (default: the one this binary was built from)")
	fl.StringVar(&b.Metric, "metric", "", "the unit to follow: sec/op, ops/s, B/op, allocs/op, or a custom unit (default: the time or throughput)")
	fl.StringVar(&b.Direction, "direction", "worse", "the change to find: worse (slower, more bytes) or better")
	fl.StringVar(&b.BuildCache, "build-cache", bisect.DefaultBuildCache(), `where builds are kept by tree hash ("off": build every step afresh)`)
	fl.BoolVar(&f.duet, "duet", false, "run each step's two forks at the same time, each pinned to half of the CPUs (swapped every round)")
	fl.Float64Var(&b.MinChange, "min-change", b.MinChange, "the smallest change, in percent, the confirmation counts as one")
	fl.Float64Var(&b.Alpha, "alpha", b.Alpha, "significance level of each A/B")
	fleet.bind(fl, "measure every A/B on a fleet's agents: its PostgreSQL database (postgres://USER@HOST:PORT/DB); the programs are built here (docs/fleet.md)")
	fl.IntVar(&b.Parallel, "parallel", 1, "with --fleet, the commits each step probes at once, each on its own agent: a (k+1)-ary search, ⌈log_(k+1) N⌉ steps instead of ⌈log₂ N⌉")
	fl.StringVar(explain, "explain", "changed", "explain the culprit's own change by its functions, from CPU profiles of it and its parent: when its time changed (changed), even when not (all: a B/op culprit), or never (off)")
	fl.IntVar(&b.ExplainRounds, "explain-rounds", ab.DefaultExplainRounds, "the CPU profiling forks of each side of the culprit's own row")
}
