package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/internal/fork"
)

// Runner runs planned cases in forked worker processes (or in process
// when Options.Forks is 0) and collects their iterations.
type Runner struct {
	Registry *Registry
	// Executable is the binary re-executed as a child (default: this
	// process's own executable); Args and Env are passed to it.
	Executable string
	Args       []string
	Env        []string
	// LogDir receives each fork's stdout and stderr ("" discards them).
	LogDir string
	// Progress, when set, is told about every fork.
	Progress func(Event)
}

// Event reports the progress of a run.
type Event struct {
	Case      Case
	Fork      int // 1-based; 0 for an in-process run
	Done      int // forks finished so far, this one included when End
	Total     int
	End       bool
	Err       error
	Estimated time.Duration // planned length of one fork
}

// Run is the outcome of a whole run.
type Run struct {
	Options   Options
	Cases     []*CaseResult
	InProcess bool
	Start     time.Time
	End       time.Time
}

// CaseResult is what every fork of one case produced.
type CaseResult struct {
	Case       Case
	Mode       Mode
	Threads    int
	Iterations []Iteration // warmup and measurement, in fork order
	Failures   []*ForkError
	// Startup is, per fork, the time from exec to the child's hello frame;
	// Ready is the time from exec to the start of the fork's first
	// iteration (trial setup included).
	Startup []time.Duration
	Ready   []time.Duration
	Sink    uint64
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
	if len(e.Tail) > 0 {
		fmt.Fprintf(&b, "\n  last %d lines of its stderr:", len(e.Tail))
		for _, l := range e.Tail {
			b.WriteString("\n  | " + l)
		}
	}
	return b.String()
}

// Run plans o against the registry and runs every case: forks rounds in
// which the cases run in a seeded random order, so drifts of the machine
// spread over all cases. Planning errors (bad input) are returned before
// anything runs; fork failures are recorded in the results and the run
// goes on.
func (rn *Runner) Run(ctx context.Context, o Options) (*Run, error) {
	cases, err := o.Plan(rn.Registry)
	if err != nil {
		return nil, err
	}
	run := &Run{Options: o, InProcess: o.Forks == 0, Start: time.Now()}
	for _, c := range cases {
		p := o.planFor(c, 0)
		run.Cases = append(run.Cases, &CaseResult{Case: c, Mode: p.Mode, Threads: o.Threads})
	}
	rounds := max(o.Forks, 1)
	total := rounds * len(cases)
	estimate := o.Warmup.estimate() + o.Measure.estimate() + 100*time.Millisecond
	rng := rand.New(rand.NewPCG(o.Seed, 0x6f72646572)) // "order"
	done := 0
	for round := 1; round <= rounds; round++ {
		for _, i := range rng.Perm(len(cases)) {
			if err := ctx.Err(); err != nil {
				run.End = time.Now()
				return run, err
			}
			cr := run.Cases[i]
			forkNo := round
			if run.InProcess {
				forkNo = 0
			}
			rn.progress(Event{Case: cr.Case, Fork: forkNo, Done: done, Total: total, Estimated: estimate})
			var ferr *ForkError
			if run.InProcess {
				ferr = rn.inProcess(o.planFor(cr.Case, forkNo), cr)
			} else {
				ferr = rn.fork(ctx, o.planFor(cr.Case, forkNo), o.Timeout, cr)
			}
			if ferr != nil {
				ferr.Benchmark, ferr.Fork = cr.Case.Name(), forkNo
				cr.Failures = append(cr.Failures, ferr)
			}
			done++
			var evErr error
			if ferr != nil {
				evErr = ferr
			}
			rn.progress(Event{Case: cr.Case, Fork: forkNo, Done: done, Total: total, End: true, Err: evErr, Estimated: estimate})
		}
	}
	run.End = time.Now()
	return run, nil
}

func (s IterSpec) estimate() time.Duration {
	if s.Ops > 0 {
		return 0
	}
	return time.Duration(s.Count) * s.Time
}

func (rn *Runner) progress(e Event) {
	if rn.Progress != nil {
		rn.Progress(e)
	}
}

func (rn *Runner) inProcess(p *Plan, cr *CaseResult) *ForkError {
	var sink uint64
	err := runTrialSink(cr.Case.Bench, p, func(it *Iteration) error {
		cr.Iterations = append(cr.Iterations, *it)
		return nil
	}, &sink)
	cr.Sink ^= sink
	if err != nil {
		fe := &ForkError{Message: err.Error()}
		var pe *PhaseError
		if errors.As(err, &pe) {
			fe.Phase, fe.Message, fe.Stack = pe.Phase, pe.Err.Error(), pe.Stack
		}
		return fe
	}
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.=-]+`)

func (rn *Runner) fork(ctx context.Context, p *Plan, timeout time.Duration, cr *CaseResult) (fe *ForkError) {
	exe := rn.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return &ForkError{Message: "find own executable: " + err.Error()}
		}
	}
	var logw io.Writer
	if rn.LogDir != "" {
		name := unsafeName.ReplaceAllString(cr.Case.Name(), "_") + fmt.Sprintf(".fork%d.log", p.Fork)
		if err := os.MkdirAll(rn.LogDir, 0o755); err == nil {
			if f, err := os.Create(filepath.Join(rn.LogDir, name)); err == nil {
				defer f.Close()
				logw = f
			}
		}
	}
	proc, err := fork.Start(ctx, fork.Spec{Path: exe, Args: rn.Args, Env: rn.Env, Log: logw})
	if err != nil {
		return &ForkError{Message: err.Error()}
	}
	defer func() {
		werr := proc.Wait(5 * time.Second)
		if fe != nil {
			if werr != nil {
				fe.Exit = exitStatus(werr)
			}
			fe.Tail = proc.StderrTail()
		} else if werr != nil {
			fe = &ForkError{Message: "child failed after reporting success", Exit: exitStatus(werr), Tail: proc.StderrTail()}
		}
	}()
	fail := func(msg string, err error) *ForkError {
		proc.Kill()
		switch {
		case errors.Is(err, fork.ErrTimeout):
			return &ForkError{Message: fmt.Sprintf("%s: hung, no report for %s; killed", msg, timeout)}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return &ForkError{Message: msg + ": the child exited without reporting"}
		}
		return &ForkError{Message: fmt.Sprintf("%s: %v", msg, err)}
	}
	f, err := proc.Next(timeout)
	if err != nil {
		return fail("waiting for hello", err)
	}
	if f.Type != fork.Hello {
		return fail("waiting for hello", fmt.Errorf("got a %s frame", f.Type))
	}
	cr.Startup = append(cr.Startup, time.Since(proc.Started()))
	payload, err := json.Marshal(p)
	if err != nil {
		return fail("encode plan", err)
	}
	if err := proc.Send(fork.Plan, payload); err != nil {
		return fail("send plan", err)
	}
	wait := timeout + max(p.Warmup.Time, p.Measure.Time)
	first := true
	for {
		f, err := proc.Next(wait)
		if err != nil {
			return fail("running", err)
		}
		switch f.Type {
		case fork.Iteration:
			var it Iteration
			if err := json.Unmarshal(f.Payload, &it); err != nil {
				return fail("decode iteration", err)
			}
			if first {
				cr.Ready = append(cr.Ready, time.Duration(it.StartUnixNano-proc.Started().UnixNano()))
				first = false
			}
			cr.Iterations = append(cr.Iterations, it)
		case fork.Done:
			var d done
			if err := json.Unmarshal(f.Payload, &d); err != nil {
				return fail("decode done", err)
			}
			cr.Sink ^= d.Sink
			return nil
		case fork.Error:
			var fl failure
			if err := json.Unmarshal(f.Payload, &fl); err != nil {
				return fail("decode error report", err)
			}
			return &ForkError{Phase: fl.Phase, Message: fl.Message, Stack: fl.Stack}
		default:
			return fail("running", fmt.Errorf("unexpected %s frame", f.Type))
		}
	}
}

func exitStatus(err error) string {
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return err.Error()
}
