package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/fork"
)

// IsChild reports whether this process is a fork child started by a
// [Runner]. Binaries that run benchmarks in forks call [ChildMain] first
// thing when it is true (benchctl.Main does; so must a TestMain whose
// tests fork).
func IsChild() bool { return fork.IsChild() }

// hello is the child's first frame.
type hello struct {
	PID        int    `json:"pid"`
	GoVersion  string `json:"goVersion"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUs       []int  `json:"cpus"` // the child's CPU affinity
}

func affinity() []int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	var out []int
	for c := 0; c < 1024; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// failure is the payload of an error frame.
type failure struct {
	Phase   string `json:"phase,omitempty"`
	Message string `json:"message"`
	Stack   string `json:"stack,omitempty"`
}

// done is the payload of a done frame.
type done struct {
	Sink uint64 `json:"sink"`
}

// ChildMain runs the child side of one fork: it drops what package inits
// built for the parent (releaseParentCaches), receives the plan, runs it
// from r and sends the results back. It returns the process exit code.
func ChildMain(r *harness.Registry) int {
	releaseParentCaches()
	conn, err := fork.OpenChild()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchctl child:", err)
		return 3
	}
	defer conn.Close()
	var finished atomic.Bool
	if err := childRun(conn, r, &finished); err != nil {
		finished.Store(true)
		f := failure{Message: err.Error()}
		var pe *harness.PhaseError
		if errors.As(err, &pe) {
			f.Phase, f.Message, f.Stack = pe.Phase, pe.Err.Error(), pe.Stack
		}
		// The stack first and the message last: the parent shows the last
		// lines of stderr.
		if pe != nil && pe.Stack != "" {
			fmt.Fprintln(os.Stderr, pe.Stack)
		}
		fmt.Fprintln(os.Stderr, "benchctl child:", err)
		if b, merr := json.Marshal(f); merr == nil {
			_ = conn.Send(fork.Error, b)
		}
		return 1
	}
	return 0
}

func childRun(conn *fork.Conn, r *harness.Registry, finished *atomic.Bool) error {
	h, _ := json.Marshal(hello{PID: os.Getpid(), GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), CPUs: affinity()})
	if err := conn.Send(fork.Hello, h); err != nil {
		return fmt.Errorf("send hello: %w", err)
	}
	f, err := conn.Receive()
	if err != nil {
		return fmt.Errorf("receive plan: %w", err)
	}
	if f.Type != fork.Plan {
		return fmt.Errorf("expected a plan frame, got %s", f.Type)
	}
	var p harness.Plan
	if err := json.Unmarshal(f.Payload, &p); err != nil {
		return fmt.Errorf("decode plan: %w", err)
	}
	// The parent sends nothing after the plan (and, in lockstep, the
	// schedule): its end closing means it is gone, and a fork no one
	// reads must not go on measuring.
	watch := func() {
		conn.WatchParent(finished.Load, func() {
			fork.EndGroup(3, "benchctl child: the parent closed the link; exiting")
		})
	}
	if p.Lockstep {
		p.Await = func() (harness.Schedule, error) {
			defer watch()
			return awaitSchedule(conn)
		}
	} else {
		watch()
	}
	b, ok := r.Lookup(p.Benchmark)
	if !ok {
		return fmt.Errorf("no benchmark %q in this binary", p.Benchmark)
	}
	sink, err := harness.Run(b, &p, func(it *result.Iteration) error {
		payload, err := json.Marshal(it)
		if err != nil {
			return err
		}
		return conn.Send(fork.Iteration, payload)
	})
	if err != nil {
		return err
	}
	d, _ := json.Marshal(done{Sink: sink})
	finished.Store(true)
	return conn.Send(fork.Done, d)
}

// awaitSchedule tells the parent this fork is set up and reads the
// schedule it answers with.
func awaitSchedule(conn *fork.Conn) (harness.Schedule, error) {
	var s harness.Schedule
	if err := conn.Send(fork.Ready, nil); err != nil {
		return s, fmt.Errorf("send ready: %w", err)
	}
	f, err := conn.Receive()
	if err != nil {
		return s, fmt.Errorf("receive the schedule: %w", err)
	}
	if f.Type != fork.Go {
		return s, fmt.Errorf("expected a go frame, got %s", f.Type)
	}
	if err := json.Unmarshal(f.Payload, &s); err != nil {
		return s, fmt.Errorf("decode the schedule: %w", err)
	}
	return s, nil
}
