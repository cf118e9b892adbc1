package harness

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/profile"
)

// Options configure a run. Start from [DefaultOptions] (or [QuickOptions])
// and change fields; flags of benchctl bind into it.
type Options struct {
	Suite  string    // suite to run ("all" when empty)
	Bench  string    // regexp on benchmark names (all when empty)
	Params Overrides // -p name=v1,v2
	Forks  int       // 0 runs in process, with a warning
	// Warmup and Measure give the iterations. In SingleShot mode the
	// warmup is skipped (a cold start) unless WarmupExplicit is set.
	Warmup         IterSpec
	WarmupExplicit bool
	Measure        IterSpec
	Mode           Mode // "" keeps each benchmark's own mode
	Threads        int  // 0 keeps each benchmark's own goroutine count
	Seed           uint64
	// Timeout is how long a fork may go without reporting, on top of the
	// iteration's own time, before it is killed as hung.
	Timeout time.Duration
	// ProbeTolerance flags iterations whose frequency probe moved more
	// than this fraction.
	ProbeTolerance float64
	// Profiles run in extra forks after the measured ones, one fork per
	// case and profiler; their iterations never enter the results.
	Profiles []profile.Kind
	// InstructionOps is the op count of the callgrind and perf forks
	// (default 20000).
	InstructionOps int64
	// PerfEvents are the events of --prof perf (default profile.PerfEvents).
	PerfEvents []string
	// CPUs records the --cpus pinning (the Runner applies it).
	CPUs []int
}

// DefaultOptions are DESIGN.md's defaults: 3 forks, 3 warmup × 1 s and
// 5 measurement × 1 s iterations.
func DefaultOptions() Options {
	return Options{
		Suite:          "all",
		Forks:          3,
		Warmup:         IterSpec{Count: 3, Time: time.Second},
		Measure:        IterSpec{Count: 5, Time: time.Second},
		Seed:           1,
		Timeout:        10 * time.Minute,
		ProbeTolerance: 0.05,
	}
}

// QuickOptions are the --quick defaults: 1 fork, 1 warmup × 200 ms and
// 3 measurement × 200 ms iterations.
func QuickOptions() Options {
	o := DefaultOptions()
	o.Forks = 1
	o.Warmup = IterSpec{Count: 1, Time: 200 * time.Millisecond}
	o.Measure = IterSpec{Count: 3, Time: 200 * time.Millisecond}
	return o
}

// Validate checks the options on their own (the registry checks names).
func (o *Options) Validate() error {
	var errs []error
	if o.Forks < 0 {
		errs = append(errs, fmt.Errorf("--forks %d: must be 0 (in process) or more", o.Forks))
	}
	if o.Warmup.Count > 0 {
		if err := o.Warmup.validate("--warmup"); err != nil {
			errs = append(errs, err)
		}
	}
	if o.Warmup.Count < 0 {
		errs = append(errs, fmt.Errorf("--warmup: negative count %d", o.Warmup.Count))
	}
	if err := o.Measure.validate("--measure"); err != nil {
		errs = append(errs, err)
	}
	if o.Measure.Count < 1 {
		errs = append(errs, fmt.Errorf("--measure %s: needs at least one measurement iteration", o.Measure))
	}
	if o.Mode != "" {
		if _, err := ParseMode(string(o.Mode)); err != nil {
			errs = append(errs, fmt.Errorf("--mode: %w", err))
		}
	}
	if o.Threads < 0 {
		errs = append(errs, fmt.Errorf("--threads %d: must be positive", o.Threads))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: must be positive", o.Timeout))
	}
	if o.ProbeTolerance < 0 {
		errs = append(errs, fmt.Errorf("probe tolerance %g: must not be negative", o.ProbeTolerance))
	}
	if len(o.Profiles) > 0 && o.Forks == 0 {
		errs = append(errs, fmt.Errorf("--prof needs forks: profilers run in their own forks (got --forks 0)"))
	}
	if _, err := o.benchRE(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (o *Options) benchRE() (*regexp.Regexp, error) {
	if o.Bench == "" {
		return nil, nil
	}
	re, err := regexp.Compile(o.Bench)
	if err != nil {
		return nil, fmt.Errorf("--bench %q: %w", o.Bench, err)
	}
	return re, nil
}

// Plan validates o and expands it against r into the cases to run.
func (o *Options) Plan(r *Registry) ([]Case, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	re, _ := o.benchRE()
	benches, err := r.Select(o.Suite, re)
	if err != nil {
		return nil, err
	}
	return Cases(benches, re, o.Params)
}

// planFor builds the fork plan of one case.
func (o *Options) planFor(c Case, fork int) *Plan {
	mode := o.Mode
	if mode == "" {
		mode = c.Bench.mode()
	}
	warm := o.Warmup
	if mode == SingleShot && !o.WarmupExplicit {
		warm.Count = 0
	}
	return &Plan{
		Benchmark:      c.Bench.ID(),
		Params:         c.Params,
		Mode:           mode,
		Threads:        o.Threads,
		Warmup:         warm,
		Measure:        o.Measure,
		Seed:           o.Seed,
		Fork:           fork,
		ProbeTolerance: o.ProbeTolerance,
	}
}
