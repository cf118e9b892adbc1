package result

import (
	"fmt"
	"strings"
	"time"
)

// Run is the outcome of a whole run (or of one side of an A/B run).
type Run struct {
	Config    Config
	Cases     []*CaseResult
	InProcess bool
	Start     time.Time
	End       time.Time
	// ProfileNotes says which profilers could not run here, and why.
	ProfileNotes []string
	// Side is the A/B side's name; Order, in the first side's Run, lists
	// "round:case:side,side" in the order the forks ran.
	Side  string
	Order []string
	// BudgetRounds, when above 0, is how many of its first rounds (Forks)
	// the run ran before its budget stopped it: the next would have ended
	// past the budget.
	BudgetRounds int
}

// Config is how a run was configured: what its result files record.
type Config struct {
	Forks int
	// Warmup and Measure give the iterations of every fork; in SingleShot
	// mode the warmup was skipped unless WarmupExplicit.
	Warmup         IterSpec
	WarmupExplicit bool
	Measure        IterSpec
	Seed           uint64
	Timeout        time.Duration
	// CPUs is the pinning of every fork, when there was one.
	CPUs []int
	// Precision and Budget, when set, are the interval the run added forks
	// for (Forks being the least) and the time it could spend on them.
	Precision float64
	Budget    time.Duration
	// Duet is set when the two sides of the run ran at the same time,
	// each on half of the CPUs, the halves swapped every round.
	Duet bool
	// Shard is "I/N" when the run measured share I of N of its cases,
	// the others being another host's.
	Shard string
}

// Failed reports whether any fork of any case failed.
func (r *Run) Failed() bool {
	for _, c := range r.Cases {
		if len(c.Failures) > 0 {
			return true
		}
	}
	return false
}

// Unit is benchfmt unit metadata for a custom metric.
type Unit struct {
	Unit   string
	Better string // "higher" or "lower" (default lower)
	Assume string // "nothing" (default) or "exact"
}

// Case identifies one benchmark at one parameter point.
type Case struct {
	// Benchmark is the benchfmt name without parameters ("BenchmarkAdd");
	// ID the registry key ("family/Name").
	Benchmark string
	ID        string
	Family    string
	// Pkg is the import path of the Go package that declared the
	// benchmark: the pkg key of its results.
	Pkg    string
	Params Params
	Units  []Unit
	// GoTest is set for a testing.B benchmark of package Pkg's test
	// binary (Family is then the package's last path element).
	GoTest bool
	// Axis is the parameter the benchmark declares as its implementation
	// axis, and Baseline the value of it the others are compared with
	// ("" when it declares none).
	Axis, Baseline string
}

// Name is the benchfmt name "BenchmarkX/a=1/b=2".
func (c Case) Name() string { return c.Benchmark + c.Params.Suffix() }

// CaseResult is what every fork of one case produced.
type CaseResult struct {
	Case    Case
	Mode    Mode
	Threads int
	// Procs is the GOMAXPROCS of the case's forks: the "-N" suffix of its
	// benchfmt names, as go test writes it (omitted when 1).
	Procs      int
	Iterations []Iteration // warmup and measurement, in fork order
	Failures   []*ForkError
	// Startup is, per fork, the time from exec to the child's hello frame;
	// Ready is the time from exec to the start of the fork's first
	// iteration (trial setup included).
	Startup []time.Duration
	Ready   []time.Duration
	Sink    uint64
	// Profiles are the profiling forks of this case; their iterations are
	// not in Iterations.
	Profiles []ProfileRun
	// ForkCPUs is each fork's CPU affinity as the child read it; Notes
	// holds what was reported before each fork (cool-down, idle wait).
	ForkCPUs [][]int
	Notes    []string
}

// ScoresByFork are the primary scores (in the case's mode) of the
// measured iterations, by fork number: the key by which two sides' forks
// of one round pair.
func (cr *CaseResult) ScoresByFork() map[int][]float64 {
	out := map[int][]float64{}
	for _, it := range cr.Iterations {
		if !it.Warmup {
			out[it.Fork] = append(out[it.Fork], it.Total.Score(cr.Mode))
		}
	}
	return out
}

// ForkScores are the primary scores (in the case's mode) of the measured
// iterations of each fork, in fork order: one slice per fork.
func (cr *CaseResult) ForkScores() [][]float64 {
	var vals []float64
	var forks []int
	for _, it := range cr.Iterations {
		if !it.Warmup {
			vals = append(vals, it.Total.Score(cr.Mode))
			forks = append(forks, it.Fork+1) // in-process runs are fork 0
		}
	}
	return GroupByFork(vals, forks)
}

// ProfileRun is one profiling fork of one case.
type ProfileRun struct {
	Kind string // the profiler: cpu, offcpu, block, mutex, allocs, instructions, perf
	// Path is the profile file, or callgrind's output for instructions.
	Path string
	// Ops is the number of ops the profile covers: those measured in
	// the profiled window, or, for a profile that is the difference of
	// cumulative snapshots (block, mutex, allocs), every op executed
	// between them.
	Ops int64
	// Round is the profiling round of the fork, from 1, when a run took
	// several of each profiler (0: the only one).
	Round             int
	InstructionsPerOp float64
	// Callgrind are an instructions fork's callgrind output files with
	// the ops each counted: one, counted inside the measured loop, or a
	// go test binary's two whole runs, at b.N = k and 2k, whose
	// difference is k ops. Exe is the program they ran, whose debug
	// information names the functions inlined at each address.
	Callgrind []CallgrindFile
	Exe       string
	// GoVersion is the runtime.Version of the fork's program, when it
	// said (a harness program does, in its hello): two sides' profiles
	// from different toolchains differ in the runtime's functions and in
	// what was inlined, whatever the change.
	GoVersion string
	// Counters are perf's event counts per op, by event name.
	Counters map[string]float64
	Err      error
}

// CallgrindFile is one callgrind output file and the ops it counted.
type CallgrindFile struct {
	Path string
	Ops  int64
}

// ForkError is a failed fork: the benchmark's own error, a crash, an exit
// or a hang, with the tail of the child's stderr.
type ForkError struct {
	Benchmark string
	Fork      int
	Phase     string // lifecycle phase of a benchmark error
	Message   string
	Stack     string
	Exit      string   // the child's exit status, when it exited
	Tail      []string // last lines of the child's stderr
	// Fatal is the child's first fatal-error or panic line when the tail
	// lacks it; Log is the fork's log file.
	Fatal string
	Log   string
}

func (e *ForkError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s fork %d: ", e.Benchmark, e.Fork)
	if e.Phase != "" {
		b.WriteString(e.Phase + ": ")
	}
	b.WriteString(e.Message)
	if e.Exit != "" {
		fmt.Fprintf(&b, " (child %s)", e.Exit)
	}
	if e.Fatal != "" {
		fmt.Fprintf(&b, "\n  it died of: %s", e.Fatal)
	}
	if len(e.Tail) > 0 {
		fmt.Fprintf(&b, "\n  last %d lines of its stderr:", len(e.Tail))
		for _, l := range e.Tail {
			b.WriteString("\n  | " + l)
		}
	}
	if e.Log != "" {
		fmt.Fprintf(&b, "\n  whole log: %s", e.Log)
	}
	return b.String()
}

// Renumber moves c's forks n to n+shift (its iterations' and failures'):
// forks measured apart (another job, another batch) numbered by round.
func (c *CaseResult) Renumber(shift int) {
	for i := range c.Iterations {
		c.Iterations[i].Fork += shift
	}
	for _, f := range c.Failures {
		f.Fork += shift
	}
}

// Forks is the highest fork number among c's iterations and failures (0
// for a nil c).
func (c *CaseResult) Forks() int {
	if c == nil {
		return 0
	}
	n := 0
	for _, it := range c.Iterations {
		n = max(n, it.Fork)
	}
	for _, f := range c.Failures {
		n = max(n, f.Fork)
	}
	return n
}

// Join appends o's forks, numbered after c's own (Renumber them first),
// to c: its iterations, failures, start-up times, CPUs and notes.
func (c *CaseResult) Join(o *CaseResult) {
	c.Iterations = append(c.Iterations, o.Iterations...)
	c.Failures = append(c.Failures, o.Failures...)
	c.Startup = append(c.Startup, o.Startup...)
	c.Ready = append(c.Ready, o.Ready...)
	c.ForkCPUs = append(c.ForkCPUs, o.ForkCPUs...)
	c.Notes = append(c.Notes, o.Notes...)
	c.Sink ^= o.Sink
	c.Threads = max(c.Threads, o.Threads)
}

// JoinRuns joins runs (one a side) measured apart, as a fleet's jobs or
// its batches are, into joined (nil at first: then one Run a side like
// runs', without their cases, their order of forks or one machine's
// CPUs). Each case's forks are renumbered by shift(the case as joined so
// far, nil when it is new), then joined to it or added; the joined runs
// span every run's time and forks.
func JoinRuns(joined, runs []*Run, shift func(have *CaseResult) int) ([]*Run, error) {
	if joined == nil {
		for _, run := range runs {
			m := *run
			m.Cases, m.Order, m.Config.CPUs = nil, nil, nil
			joined = append(joined, &m)
		}
	}
	if len(runs) != len(joined) {
		return nil, fmt.Errorf("%d sides' runs, %d before", len(runs), len(joined))
	}
	for s, run := range runs {
		m := joined[s]
		if run.Start.Before(m.Start) {
			m.Start = run.Start
		}
		if run.End.After(m.End) {
			m.End = run.End
		}
		index := map[string]*CaseResult{}
		for _, c := range m.Cases {
			index[c.Case.Name()] = c
		}
		for _, c := range run.Cases {
			have := index[c.Case.Name()]
			c.Renumber(shift(have))
			if have != nil {
				have.Join(c)
				c = have
			} else {
				index[c.Case.Name()] = c
				m.Cases = append(m.Cases, c)
			}
			m.Config.Forks = max(m.Config.Forks, c.Forks())
		}
	}
	return joined, nil
}
