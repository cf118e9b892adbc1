package benchctl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/axis"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// refuseOnFleet refuses what run cannot do on a fleet yet: a fleet runs
// this program's benchmarks in rounds (fixed, or until decided), timed
// only.
func refuseOnFleet(cmd *cobra.Command, o engine.Options, untilDecided bool) error {
	var what string
	switch set := cmd.Flags().Changed; {
	case o.Precision > 0:
		what = "--precision"
	case set("budget") && !untilDecided:
		what = "--budget without --until-decided"
	case len(o.Profiles) > 0:
		what = "--prof"
	case !o.Shard.Whole():
		what = "--shard (a fleet shares the cases among its agents itself)"
	case o.Forks == 0:
		what = "--forks 0"
	default:
		return nil
	}
	return usageError(fmt.Errorf("--fleet runs rounds of timed forks: %s runs on one machine", what))
}

// runOnFleet measures the cases in o.Forks rounds on the fleet's agents
// of one class, this very program published as the one they run: a job
// holds whole comparison groups (an implementation axis's points, paired
// by round on one machine). Each machine's results file goes to
// DIR/machines and all of them, one after another, to DIR/bench.txt
// (ab.Remotely, as an A/B on a fleet); it prints the pull-request tables
// with each machine a stratum (or, for benchmarks without an axis, every
// row), and writes bench.json and JMH's table from the machines' runs.
func (a *app) runOnFleet(cmd *cobra.Command, f *runFlags, ff fleetFlags, untilDecided bool, packages int) error {
	if packages > 0 {
		return ab.ErrFleetPackages
	}
	o, cases, err := a.plan(cmd, f)
	if err != nil {
		return err
	}
	if untilDecided {
		if err := bindRunUntilDecided(cmd, &o, f); err != nil {
			return err
		}
	}
	if err := refuseOnFleet(cmd, o, untilDecided); err != nil {
		return err
	}
	remote, closer, err := a.remote(cmd, ff)
	if err != nil {
		return err
	}
	defer closer.Close()
	exe, err := os.Executable()
	if err != nil {
		return failedError(fmt.Sprintf("this program, to publish to the fleet: %v", err))
	}
	out, err := f.outDir("runs")
	if err != nil {
		return err
	}
	a.say("%d cases × %d rounds on the fleet, warmup %s, measure %s, seed %d → %s", len(cases), o.Forks, o.Warmup, o.Measure, o.Seed, out)
	side := engine.Side{Launch: engine.Program{Executable: exe}}
	r := ab.Rounds{Engine: o, Cases: cases, Sides: []engine.Side{side}, Dir: filepath.Join(out, "machines")}
	wait := axis.NewWait(resultCases(cases), waitOver(o))
	b, err := ab.RunRemotely(cmd.Context(), a.env(), remote, r, out, wait)
	if err == nil && o.UntilDecided {
		a.reportFleetUndecided(wait, b, cases, o.Budget)
	}
	if b.Tables != nil {
		if err := axis.WriteOf(a.stdout, b.Paths, resultCases(cases), b.Tables, o.UntilDecided); err != nil {
			a.say("the tables could not be made: %v", err)
		}
	}
	if err != nil {
		return err
	}
	// bench.json and JMH's table, as a run on one machine writes them.
	if table, err := ab.WriteJMH(out, report.CollectHeader(a.dir, ""), b.Runs); err != nil {
		a.say("bench.json and the JMH table are left out: %v", err)
	} else if f.jmh {
		fmt.Fprintf(a.stdout, "\n## Every case (JMH's table)\n\n%s", table)
	}
	rec := b.Rec
	fmt.Fprintf(a.stdout, "\nresults: %s (%d file(s) of machines; in %s)\n", rec.Path, len(b.Paths), filepath.Dir(rec.Path))
	if rec.Failed > 0 {
		return failedError(fmt.Sprintf("%d fork(s) failed on the fleet; %s says which and why", rec.Failed, rec.Path))
	}
	return nil
}

// reportFleetUndecided says how many cases a run --until-decided on a
// fleet decided, and why each compared case's row that is not decided
// is not.
func (a *app) reportFleetUndecided(w *axis.Wait, b *ab.Batches, cases []engine.Case, budget time.Duration) {
	decided, undecided, err := ab.Undecided(w, b, resultCases(cases))
	if err != nil {
		a.say("--until-decided: the rows could not be decided: %v", err)
		return
	}
	a.say("--until-decided: %d of %d cases decided in %s (budget %s), %d rounds at most", decided, len(cases), b.Took.Round(time.Second), budget, b.Rounds)
	if len(undecided) > 0 {
		a.say("undecided (their rows say unknown, with the sequence of their change):\n  %s", strings.Join(undecided, "\n  "))
	}
}
