package benchctl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/axis"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// refuseOnFleet refuses what run cannot do on a fleet yet: a fleet runs
// this program's benchmarks in fixed rounds, timed only.
func refuseOnFleet(cmd *cobra.Command, o engine.Options, untilDecided bool, packages int) error {
	var what string
	switch set := cmd.Flags().Changed; {
	case packages > 0:
		return usageError(errors.New("--fleet runs this program's benchmarks; a package's go test benchmarks need its directory on the agent, which a fleet does not ship yet"))
	case untilDecided:
		what = "--until-decided"
	case o.Precision > 0:
		what = "--precision"
	case set("budget"):
		what = "--budget"
	case len(o.Profiles) > 0:
		what = "--prof"
	case !o.Shard.Whole():
		what = "--shard (a fleet shares the cases among its agents itself)"
	case o.Forks == 0:
		what = "--forks 0"
	default:
		return nil
	}
	return usageError(fmt.Errorf("--fleet runs fixed rounds of timed forks: %s runs on one machine", what))
}

// runOnFleet measures the cases in o.Forks rounds on the fleet's agents
// of one class, this very program published as the one they run: a job
// holds whole comparison groups (an implementation axis's points, paired
// by round on one machine). It writes each machine's results file to
// DIR/machines, all of them one after another to DIR/bench.txt, and
// prints the pull-request tables with each machine a stratum (or, for
// benchmarks without an axis, every row).
func (a *app) runOnFleet(cmd *cobra.Command, f *runFlags, ff fleetFlags, untilDecided bool, packages int) error {
	if packages > 0 {
		return refuseOnFleet(cmd, engine.Options{}, false, packages)
	}
	o, cases, err := a.plan(cmd, f)
	if err != nil {
		return err
	}
	if err := refuseOnFleet(cmd, o, untilDecided, 0); err != nil {
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
	paths, err := remote.Measure(cmd.Context(), a.env(), ab.Rounds{Engine: o, Cases: cases, Sides: []engine.Side{side}, Dir: filepath.Join(out, "machines")})
	if err != nil {
		return err
	}
	return a.fleetRunOutput(paths, cases, out)
}

// fleetRunOutput prints a fleet run's tables and writes out/bench.txt,
// the machines' files (paths) one after another; a failed fork fails it.
func (a *app) fleetRunOutput(paths []string, cases []engine.Case, out string) error {
	var data []byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return failedError(err.Error())
		}
		data = append(data, b...)
	}
	if err := a.fleetRunTables(paths, cases); err != nil {
		a.say("the tables could not be made: %v", err)
	}
	path := filepath.Join(out, "bench.txt")
	if _, err := session.ReplaceFile(path, data); err != nil {
		return failedError(fmt.Sprintf("%v (each machine's file is in %s)", err, filepath.Join(out, "machines")))
	}
	fmt.Fprintf(a.stdout, "\nresults: %s (%d machine(s); each one's file in %s)\n", path, len(paths), filepath.Join(out, "machines"))
	if n := bytes.Count(data, []byte("\n"+result.FailedMarker)); n > 0 {
		return failedError(fmt.Sprintf("%d fork(s) failed on the fleet; %s says which and why", n, path))
	}
	return nil
}

// fleetRunTables prints a fleet run's pull-request tables, or, when its
// benchmarks declare no implementation axis, every row.
func (a *app) fleetRunTables(paths []string, cases []engine.Case) error {
	tables, err := axis.TablesOf(paths, resultCases(cases))
	if err != nil {
		return err
	}
	if len(tables) > 0 {
		return axis.WriteTables(a.stdout, tables)
	}
	ts, err := compare.Build(paths, compare.Options{Ignore: compare.HostKeys})
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	return ts.Markdown(a.stdout, nil)
}
