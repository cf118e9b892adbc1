package harness

import (
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// Plan is what one fork runs: one case of one benchmark, in one mode,
// with its warmup and measurement iterations. The parent sends it to the
// worker process as JSON. The planner fills in every default; the
// measuring core applies none of its own.
type Plan struct {
	Benchmark string        `json:"benchmark"` // the registry ID, "family/Name"
	Params    result.Params `json:"params"`
	Mode      result.Mode   `json:"mode"`
	Threads   int           `json:"threads,omitempty"` // 0: the benchmark's default
	// Instances, when Threads is 0 and the benchmark fixes no goroutine
	// count, is the number of goroutines of a symmetric benchmark or of
	// group instances of a group (go test -cpu).
	Instances int             `json:"instances,omitempty"`
	Warmup    result.IterSpec `json:"warmup"`
	Measure   result.IterSpec `json:"measure"`
	Seed      uint64          `json:"seed"`
	Fork      int             `json:"fork"`
	// ProbeTolerance is the relative change of the frequency probe above
	// which an iteration is flagged.
	ProbeTolerance float64 `json:"probeTolerance,omitempty"`
	// Profile, when set, names the in-process profiler of a profiling
	// fork (cpu, offcpu, block, mutex, allocs): it covers the measurement
	// iterations and is written to ProfilePath.
	Profile     string `json:"profile,omitempty"`
	ProfilePath string `json:"profilePath,omitempty"`
	// Lockstep asks the fork to keep a Schedule that Await returns: the
	// fork of a duet. Await, set by the child, tells the parent the trial
	// is set up and waits for the schedule; Run calls it once, after
	// setup and before the first iteration.
	Lockstep bool                     `json:"lockstep,omitempty"`
	Await    func() (Schedule, error) `json:"-"`
	// Plant is a known slowdown, for calibrating the statistics only
	// (benchctl calibrate --plant): each worker's measured window, once
	// its ops are done, spins on the clock for Plant times the time they
	// took, and that time is measured with them. Its ns/op and ops/s move
	// by 1+Plant; sample-time percentiles, which time each op, do not.
	// 0 (every other run) plants nothing.
	Plant float64 `json:"plant,omitempty"`
}

// MaxPlant bounds Plan.Plant: a planted slowdown of at most +100 %.
const MaxPlant = 1.0

// PhaseError is a failure of the benchmark's own code, with the lifecycle
// phase it happened in and, for a panic, the goroutine's stack.
type PhaseError struct {
	Phase string
	Err   error
	Stack string
}

func (e *PhaseError) Error() string { return e.Phase + ": " + e.Err.Error() }
func (e *PhaseError) Unwrap() error { return e.Err }
