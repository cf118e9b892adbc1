package benchctl

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/bisect"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	nightlylib "github.com/ledgerbench/ledgerbench/internal/nightly"
)

func (a *app) nightlyCmd() *cobra.Command {
	var f runFlags
	var no nightlylib.Options
	var explain string
	var ff fleetFlags
	var every, at time.Duration
	c := &cobra.Command{
		Use:   "nightly [run flags] [--results DIR] [--anchor REV|none] [--fleet URL --every D --at D] [PACKAGES...]",
		Short: "Record a run per machine, find change points in each benchmark's series, regenerate results/README.md",
		Long: `nightly checks the host (refusing one that is not pinned unless --allow-unpinned), runs the
selected benchmarks with this binary as HEAD — against an anchor revision when there is one (the
latest tag by default; --anchor none for a plain run), built as ab builds its baseline and kept
in --build-cache for the next night — and
records the run, append-only, as DIR/nightly/<machine-id>/YYYY/MM/<stamp>_<commit>.txt, with the
machine's fingerprint in DIR/machines/<machine-id>.json. It then reads every run of the machine
(never mixing machines), finds change points in each benchmark's series (E-divisive means with a
permutation test), regenerates DIR/README.md and exits 1 when a new regression appears among the
last runs; an A/B of the commits around it (DIR/explain/) names the functions behind it, or with
--bisect its culprit is found. A change of env-id at a change point is annotated, not alarmed. With
package arguments it records their go test benchmarks (see run), built as ab builds them.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, cases, err := a.planOrPackages(cmd, &f, args)
			if err != nil {
				return err
			}
			if ff.url != "" || cmd.Flags().Changed("every") || cmd.Flags().Changed("at") {
				return a.nightlyOnFleet(cmd, ff, nightlylib.Options{Engine: o, Cases: cases, Packages: args, Anchor: no.Anchor, Bisect: no.Bisect}, every, at)
			}
			no.Engine, no.Cases, no.Packages, no.Registry, no.Dir, no.Host = o, cases, args, a.registry, a.dir, f.hostOptions()
			no.StepBudget, no.Now = f.budget, a.clock
			if no.Explain, err = ab.ParseExplain(explain); err != nil {
				return err
			}
			if a.charts != nil && a.charts.Series != nil {
				no.Chart = a.charts.Series
			}
			no.Report = func(r *bisect.Report) { r.Markdown(a.stdout) }
			res, err := nightlylib.Run(cmd.Context(), a.env(), no)
			if res != nil {
				fmt.Fprintf(a.stdout, "recorded %s\n", res.Path)
				a.written = append(a.written, res.Bisections...)
			}
			return err
		},
	}
	a.addRunFlags(c, &f, engine.DefaultOptions())
	_ = c.Flags().MarkHidden("prof") // refused by nightly: profile with run --prof
	a.addServerFlags(c)
	bindNightly(c.Flags(), &no, &explain)
	ff.bind(c.Flags(), "instead of running, register this program's benchmarks as the nightly of a class of the fleet whose database is URL: its agents run it on schedule and upload it to their --server")
	_ = c.Flags().MarkHidden("job-time") // a night is one job
	c.Flags().DurationVar(&every, "every", 24*time.Hour, "with --fleet, how often the night runs")
	c.Flags().DurationVar(&at, "at", 3*time.Hour, "with --fleet, when in each period the night runs, from the Unix epoch (with --every 24h: 3h is 03:00 UTC)")
	return c
}

// nightlyOnFleet registers the run o plans as the nightly of the fleet's
// class, and says when it runs.
func (a *app) nightlyOnFleet(cmd *cobra.Command, ff fleetFlags, o nightlylib.Options, every, at time.Duration) error {
	if ff.url == "" {
		return usageError(errors.New("--every and --at go with --fleet"))
	}
	if err := refuseOnFleet(cmd, o.Engine, false); err != nil {
		return err
	}
	if err := nightlylib.CheckFleet(o); err != nil {
		return err
	}
	remote, closer, err := a.remote(cmd, ff)
	if err != nil {
		return err
	}
	defer closer.Close()
	next, err := nightlylib.OnFleet(cmd.Context(), remote, o, every, at)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "nightly registered: %d cases × %d rounds every %s, the next night at %s; the night just past runs when an agent takes it up\n",
		len(o.Cases), o.Engine.Forks, every, next.UTC().Format(time.RFC3339))
	return nil
}

// bindNightly defines nightly's own flags of a night in fl.
func bindNightly(fl *pflag.FlagSet, no *nightlylib.Options, explain *string) {
	fl.StringVar(&no.Results, "results", "results", "the results directory")
	fl.StringVar(&no.Anchor, "anchor", "", "anchor revision to run against (default: the latest tag; none: a plain run)")
	fl.StringVar(&no.BuildCache, "build-cache", bisect.DefaultBuildCache(), `where programs built at commits (the anchor's, a bisection's) are kept by tree hash ("off": build them every night)`)
	fl.StringVar(&no.Program, "cmd", "", "the benchmark program's main package, to build the anchor (default: the one this binary was built from)")
	fl.BoolVar(&no.AllowUnpinned, "allow-unpinned", false, "run on a host that is not pinned (the results say host-pinned: no)")
	fl.BoolVar(&no.Bisect, "bisect", false, "bisect each new regression (as bisect does, into DIR/bisect/<machine-id>/), and show its culprit beside it")
	fl.DurationVar(&no.BisectBudget, "bisect-budget", time.Hour, "the machine time after which no further bisection or explanation of a regression starts")
	fl.StringVar(explain, "explain", "changed", "explain each new regression by its functions (changed): by an A/B of its runs' commits, or with --bisect its culprit's own change; or not (off)")
}
