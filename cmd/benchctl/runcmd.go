package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/profile"
	"github.com/ledgerbench/ledgerbench/harness/report"
)

// runFlags are the raw flag values of `benchctl run`.
type runFlags struct {
	suite, bench, mode, warmup, measure, out, prof string
	params                                         []string
	forks, threads                                 int
	seed                                           uint64
	timeout                                        time.Duration
	quick                                          bool
	strict, ignoreLock                             bool
	cpus, lockPath                                 string
	cooldown, idleLoad                             float64
	cooldownTimeout, idleTimeout                   time.Duration
}

func (a *app) runCmd() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run [flags]",
		Short: "Run benchmarks in forked workers and write bench.txt and bench.json",
		Example: `  benchctl run --suite self --quick
  benchctl run --bench 'Alloc' -p size=64,4096 --forks 5 --measure 10x500ms
  benchctl run --suite self --bench Kernel --mode sample --measure 5x100000ops`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options(cmd)
			if err != nil {
				return usageError{err}
			}
			if f.cooldown < 0 {
				return usageError{fmt.Errorf("--cooldown %g: a negative temperature", f.cooldown)}
			}
			if f.idleLoad < 0 {
				return usageError{fmt.Errorf("--idle-load %g: a negative load", f.idleLoad)}
			}
			return a.doRun(cmd, o, &f)
		},
	}
	addRunFlags(c, &f)
	return c
}

// addRunFlags declares the flags of a run (run, ab).
func addRunFlags(c *cobra.Command, f *runFlags) {
	fl := c.Flags()
	fl.StringVar(&f.suite, "suite", "all", "suite to run: "+strings.Join(harness.Suites, ", "))
	fl.StringVar(&f.bench, "bench", "", "regexp selecting benchmarks by name (BenchmarkX/param=value…) or family/Name")
	fl.StringArrayVarP(&f.params, "param", "p", nil, "override a parameter's values: name=v1,v2 (repeatable)")
	fl.IntVar(&f.forks, "forks", 3, "forked worker processes per benchmark; 0 runs in process (less trustworthy)")
	fl.StringVar(&f.warmup, "warmup", "3x1s", "warmup iterations: COUNTxTIME, COUNTxNops or COUNT")
	fl.StringVar(&f.measure, "measure", "5x1s", "measurement iterations: COUNTxTIME, COUNTxNops or COUNT")
	fl.StringVar(&f.mode, "mode", "", "mode for every benchmark: avgt, thrpt, sample, ss (default: each benchmark's own)")
	fl.IntVar(&f.threads, "threads", 0, "worker goroutines (a multiple of the group size for group benchmarks; default: each benchmark's own)")
	fl.BoolVar(&f.quick, "quick", false, "quick run: 1 fork, 1x200ms warmup, 3x200ms measurement (explicit flags still win)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of every generated input and of the fork order")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Minute, "kill a fork that reports nothing for this long beyond its iteration time")
	fl.StringVar(&f.out, "out", "", "output directory (default results/runs/<UTC stamp>)")
	fl.BoolVar(&f.strict, "strict", false, "refuse to run on a host that is not pinned (see benchctl check)")
	fl.StringVar(&f.cpus, "cpus", "", "pin every fork to these CPUs (2,3 or 2-3) and set GOMAXPROCS to their number")
	fl.Float64Var(&f.cooldown, "cooldown", 0, "before each fork, wait until every thermal zone is at or below this many °C")
	fl.DurationVar(&f.cooldownTimeout, "cooldown-timeout", 5*time.Minute, "longest cool-down wait before going on with a warning")
	fl.Float64Var(&f.idleLoad, "idle-load", 0, "before each fork, wait until the 1-minute load average is below this")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 5*time.Minute, "longest idle wait before going on with a warning")
	fl.BoolVar(&f.ignoreLock, "ignore-lock", false, "run even when another benchctl run holds the host's run lock")
	fl.StringVar(&f.lockPath, "lock", hostcheck.DefaultLockPath(), "the run lock file")
	fl.StringVar(&f.prof, "prof", "", "profilers, run in extra forks after the measured ones: cpu,offcpu,block,mutex,allocs,instructions,perf")
}

// options binds the flags into harness.Options: the defaults (or the quick
// ones), then every flag the user set.
func (f *runFlags) options(cmd *cobra.Command) (harness.Options, error) {
	o := harness.DefaultOptions()
	if f.quick {
		o = harness.QuickOptions()
	}
	set := cmd.Flags().Changed
	o.Suite, o.Bench, o.Seed, o.Timeout = f.suite, f.bench, f.seed, f.timeout
	if set("forks") {
		o.Forks = f.forks
	}
	if set("warmup") {
		spec, err := harness.ParseIterSpec(f.warmup, o.Warmup)
		if err != nil {
			return o, fmt.Errorf("--warmup: %w", err)
		}
		o.Warmup, o.WarmupExplicit = spec, true
	}
	if set("measure") {
		spec, err := harness.ParseIterSpec(f.measure, o.Measure)
		if err != nil {
			return o, fmt.Errorf("--measure: %w", err)
		}
		o.Measure = spec
	}
	if f.mode != "" {
		m, err := harness.ParseMode(f.mode)
		if err != nil {
			return o, fmt.Errorf("--mode: %w", err)
		}
		o.Mode = m
	}
	o.Threads = f.threads
	if f.prof != "" {
		kinds, err := profile.ParseKinds(f.prof)
		if err != nil {
			return o, fmt.Errorf("--prof: %w", err)
		}
		o.Profiles = kinds
	}
	o.Params = harness.Overrides{}
	for _, p := range f.params {
		if err := o.Params.Add(p); err != nil {
			return o, fmt.Errorf("-p: %w", err)
		}
	}
	return o, nil
}

func (a *app) doRun(cmd *cobra.Command, o harness.Options, f *runFlags) error {
	out := f.out
	cases, err := o.Plan(a.registry)
	if err != nil {
		return usageError{err}
	}
	host := a.localHost()
	if f.cpus != "" {
		if o.CPUs, err = host.CheckCPUs(f.cpus); err != nil {
			return usageError{err}
		}
	}
	check := hostcheck.Check(host)
	if f.strict && !check.Pinned {
		return failedError{"--strict: refusing to run on a host that is not pinned: " + strings.Join(check.Reasons, "; ")}
	}
	if out == "" {
		out = filepath.Join("results", "runs", time.Now().UTC().Format("20060102T150405Z"))
	}
	if err := report.CheckWritable(out); err != nil {
		return usageError{err}
	}
	if !f.ignoreLock {
		release, err := hostcheck.Lock(f.lockPath)
		if err != nil {
			return failedError{err.Error()}
		}
		defer release()
	}
	header := report.CollectHeader(a.dir, "benchctl "+strings.Join(a.args, " "))
	header.MachineID, header.EnvID = check.MachineID, check.EnvID
	header.HostPinned, header.HostNote = "no", check.Note()
	if check.Pinned {
		header.HostPinned = "yes"
	}
	if a.header != nil {
		a.header(&header)
	}
	if o.Forks == 0 {
		fmt.Fprintln(a.stderr, "benchctl: WARNING: --forks 0 runs every benchmark inside this process: heap, GC and scheduler state carry over between benchmarks, so results are less trustworthy than forked ones")
	}
	fmt.Fprintf(a.stderr, "benchctl: %d cases × %d forks, warmup %s, measure %s, seed %d → %s\n", len(cases), max(o.Forks, 1), o.Warmup, o.Measure, o.Seed, out)
	fmt.Fprintf(a.stderr, "benchctl: host-pinned=%s: %s\n", header.HostPinned, header.HostNote)
	prog := newProgress(a.stderr)
	rn := &harness.Runner{
		Registry: a.registry, Executable: a.executable, Args: a.childArgs, Env: a.childEnv,
		LogDir: filepath.Join(out, "logs"), Progress: prog.event,
		ProfileDir: filepath.Join(out, "profiles"), CPUs: o.CPUs,
		BeforeFork: a.beforeFork(host, f),
	}
	run, runErr := rn.Run(cmd.Context(), o)
	prog.close()
	if run == nil {
		return usageError{runErr}
	}
	if err := report.WriteRun(out, header, run); err != nil {
		return failedError{fmt.Sprintf("writing results: %v", err)}
	}
	var table bytes.Buffer
	if err := report.WriteTable(&table, run); err != nil {
		return failedError{fmt.Sprintf("rendering the table: %v", err)}
	}
	a.stdout.Write(table.Bytes())
	fmt.Fprintf(a.stdout, "\nresults: %s and %s\n", filepath.Join(out, "bench.txt"), filepath.Join(out, "bench.json"))
	for _, n := range run.ProfileNotes {
		fmt.Fprintln(a.stderr, "benchctl: profiler", n)
	}
	if len(o.Profiles) > 0 {
		summary, err := report.WriteProfileSummary(filepath.Join(out, "profiles"), run)
		if err != nil {
			return failedError{fmt.Sprintf("writing the profile summary: %v", err)}
		}
		fmt.Fprintf(a.stdout, "\n%s\nprofiles: %s\n", summary, filepath.Join(out, "profiles"))
	}
	var failed int
	for _, cr := range run.Cases {
		for _, fe := range cr.Failures {
			failed++
			fmt.Fprintln(a.stderr, "benchctl: FAILED", fe.Error())
		}
		for _, pr := range cr.Profiles {
			if pr.Err != nil {
				failed++
				fmt.Fprintf(a.stderr, "benchctl: FAILED profiling fork %s of %s: %v\n", pr.Kind, cr.Case.Name(), pr.Err)
			}
		}
	}
	if runErr != nil {
		return failedError{fmt.Sprintf("run interrupted: %v (results so far are written)", runErr)}
	}
	if failed > 0 {
		return failedError{fmt.Sprintf("%d fork(s) failed; every result obtained is in %s", failed, out)}
	}
	return nil
}

// beforeFork waits, bounded, for a cool and idle host before each fork,
// and says what it found.
func (a *app) beforeFork(host *hostcheck.Host, f *runFlags) func(harness.Case, int) string {
	if f.cooldown == 0 && f.idleLoad == 0 {
		return nil
	}
	return func(harness.Case, int) string {
		var notes []string
		if f.cooldown > 0 {
			t, ok, err := host.WaitCool(f.cooldown, f.cooldownTimeout, time.Second)
			switch {
			case err != nil:
				notes = append(notes, "cool-down skipped: "+err.Error())
			case !ok:
				notes = append(notes, fmt.Sprintf("WARNING: still %.1f °C after %s (cool-down target %.1f °C)", t, f.cooldownTimeout, f.cooldown))
			default:
				notes = append(notes, fmt.Sprintf("cooled to %.1f °C", t))
			}
		}
		if f.idleLoad > 0 {
			l, ok, err := host.WaitIdle(f.idleLoad, f.idleTimeout, time.Second)
			switch {
			case err != nil:
				notes = append(notes, "idle wait skipped: "+err.Error())
			case !ok:
				notes = append(notes, fmt.Sprintf("WARNING: load %.2f after %s (target below %.2f)", l, f.idleTimeout, f.idleLoad))
			default:
				notes = append(notes, fmt.Sprintf("load %.2f", l))
			}
		}
		for _, n := range notes {
			if strings.HasPrefix(n, "WARNING") || strings.Contains(n, "skipped") {
				fmt.Fprintln(a.stderr, "benchctl:", n)
			}
		}
		return strings.Join(notes, "; ")
	}
}
