package harness

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// hooks holds the lifecycle functions of one state instance: JMH's
// @Setup/@TearDown at Level.Iteration and Level.Invocation, and the
// Level.Trial teardown (the trial setup is the function that created the
// state).
type hooks struct {
	iterSetup, iterTeardown []func() error
	invSetup, invTeardown   []func() error
	teardown                []func() error
}

func (h *hooks) onIteration(setup, teardown func() error) {
	if setup != nil {
		h.iterSetup = append(h.iterSetup, setup)
	}
	if teardown != nil {
		h.iterTeardown = append(h.iterTeardown, teardown)
	}
}

func (h *hooks) onInvocation(setup, teardown func() error) {
	if setup != nil {
		h.invSetup = append(h.invSetup, setup)
	}
	if teardown != nil {
		h.invTeardown = append(h.invTeardown, teardown)
	}
}

func (h *hooks) hasInvocation() bool { return len(h.invSetup)+len(h.invTeardown) > 0 }

// runAll runs fs in order (reverse order when reverse is set, as teardowns
// unwind), stopping at the first error.
func runAll(fs []func() error, reverse bool) error {
	for i := range fs {
		f := fs[i]
		if reverse {
			f = fs[len(fs)-1-i]
		}
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// Trial is the Scope.Benchmark state of one trial: it is created once per
// fork, shared by every worker goroutine, and passed to [Benchmark.Setup].
type Trial struct {
	bench   *Benchmark
	params  result.Params
	seed    uint64
	threads int
	hooks
	invMu sync.Mutex // serializes benchmark-scope invocation hooks across workers

	ops        []Op
	groupSetup func(*Group) error
	group      bool
	metrics    map[string]float64 // trial-level metrics, reported with every iteration
}

// ReportMetric records a fact of the trial measured in Setup, such as
// the memory a structure takes per element ("B/entry"); it is reported
// with every iteration of the trial. The unit must not end in "/op" (per-op
// figures are counters, see [Worker.Counter]).
func (t *Trial) ReportMetric(unit string, value float64) {
	if unit == "" || strings.HasSuffix(unit, "/op") || strings.ContainsAny(unit, " \t") {
		panic(fmt.Sprintf("harness: trial metric unit %q must be non-empty, hold no spaces and not end in /op", unit))
	}
	if t.metrics == nil {
		t.metrics = map[string]float64{}
	}
	t.metrics[unit] = value
}

// Op is one operation of a benchmark: the body that a worker goroutine
// calls once per invocation. Bind runs once per worker at trial setup; it
// creates the worker's goroutine-scoped state and returns the body, so the
// body's state is captured in a closure and the measured loop pays one
// indirect call per invocation and nothing else.
type Op struct {
	Name       string
	Goroutines int // goroutines per group instance (default 1)
	Bind       func(w *Worker) (body func(), err error)
}

// Param returns the value of a declared parameter. Asking for an
// undeclared parameter is a programmer error and panics.
func (t *Trial) Param(name string) string {
	v, ok := t.params.Get(name)
	if !ok {
		panic(fmt.Sprintf("harness: %s has no parameter %q", t.bench.FullName(), name))
	}
	return v
}

// Int returns a declared Int parameter's value.
func (t *Trial) Int(name string) int {
	v, err := strconv.Atoi(t.Param(name))
	if err != nil {
		panic(fmt.Sprintf("harness: parameter %q of %s is not an int: %v", name, t.bench.FullName(), err))
	}
	return v
}

// Duration returns a declared Duration parameter's value.
func (t *Trial) Duration(name string) time.Duration {
	d, err := time.ParseDuration(t.Param(name))
	if err != nil {
		panic(fmt.Sprintf("harness: parameter %q of %s is not a duration: %v", name, t.bench.FullName(), err))
	}
	return d
}

// Seed is the run's seed; every random input must derive from it.
func (t *Trial) Seed() uint64 { return t.seed }

// Rand returns a new generator seeded from the run's seed and stream.
func (t *Trial) Rand(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(t.seed, stream)) }

// Goroutines is the total number of worker goroutines of this trial.
func (t *Trial) Goroutines() int { return t.threads }

// OnIteration registers benchmark-scope hooks run once before and after
// every iteration (warmup and measurement), outside the measured window.
func (t *Trial) OnIteration(setup, teardown func() error) { t.onIteration(setup, teardown) }

// OnInvocation registers benchmark-scope hooks run around every invocation
// of every worker, serialized by a lock. Like JMH's Level.Invocation they
// force one clock read pair per invocation: use them only for ops that
// take far longer than a clock read (about 50 ns here).
func (t *Trial) OnInvocation(setup, teardown func() error) { t.onInvocation(setup, teardown) }

// OnTeardown registers the trial-level teardown of the benchmark state.
func (t *Trial) OnTeardown(f func() error) { t.teardown = append(t.teardown, f) }

// Run declares a symmetric benchmark: every worker goroutine runs the body
// that bind returns.
func (t *Trial) Run(bind func(w *Worker) (func(), error)) {
	t.ops = append(t.ops, Op{Name: "", Goroutines: 1, Bind: bind})
}

// Group declares an asymmetric group (JMH's @Group): the ops run
// concurrently, each by its own number of goroutines, on shared state.
// Each op is reported on its own and the group as a whole.
func (t *Trial) Group(ops ...Op) {
	t.group = true
	t.ops = append(t.ops, ops...)
}

// GroupSetup registers the constructor of the Scope.Group state: it runs
// once per group instance at trial setup, before the workers bind.
func (t *Trial) GroupSetup(f func(g *Group) error) { t.groupSetup = f }

func (t *Trial) groupSize() int {
	n := 0
	for _, op := range t.ops {
		n += max(op.Goroutines, 1)
	}
	return n
}

func (t *Trial) checkOps() error {
	if len(t.ops) == 0 {
		return errors.New("Setup declared no op: call Trial.Run or Trial.Group")
	}
	if !t.group && len(t.ops) > 1 {
		return errors.New("Setup called Trial.Run more than once")
	}
	seen := map[string]bool{}
	for _, op := range t.ops {
		if op.Bind == nil {
			return fmt.Errorf("op %q has a nil Bind", op.Name)
		}
		if t.group && (!nameRE.MatchString(op.Name) || seen[op.Name]) {
			return fmt.Errorf("group op name %q is empty, not an identifier, or used twice", op.Name)
		}
		seen[op.Name] = true
		if op.Goroutines < 0 {
			return fmt.Errorf("op %q has negative Goroutines", op.Name)
		}
	}
	return nil
}

// Group is the Scope.Group state of one group instance: shared by the
// workers of that instance only.
type Group struct {
	Index int
	// Value is the instance's state, set by the GroupSetup function.
	Value any
	hooks
	invMu sync.Mutex
}

// OnIteration registers group-scope iteration hooks.
func (g *Group) OnIteration(setup, teardown func() error) { g.onIteration(setup, teardown) }

// OnInvocation registers group-scope invocation hooks, run around every
// invocation of every worker of the group, serialized by a lock.
func (g *Group) OnInvocation(setup, teardown func() error) { g.onInvocation(setup, teardown) }

// OnTeardown registers the group state's trial-level teardown.
func (g *Group) OnTeardown(f func() error) { g.teardown = append(g.teardown, f) }

// Worker is one worker goroutine and its Scope.Goroutine state (JMH's
// Scope.Thread). Its methods are for Bind and for the hooks it registers;
// the body may use Sink and its counters.
type Worker struct {
	id, opIndex int
	op          *Op
	group       *Group
	trial       *Trial
	rng         *rand.Rand
	hooks
	body       func()
	sharp      bool // invocation hooks apply: time each invocation
	counters   []*Counter
	c0         []float64 // counter snapshot at the window start
	batch      int64
	opi        int64
	calibrated bool
	inWindow   bool
	label      bool // profiling CPU: label the goroutine inside its window
	sink       uint64
	hist       *histogram
	plant      float64 // Plan.Plant
}

// ID is the worker's index among all workers of the trial.
func (w *Worker) ID() int { return w.id }

// Op is the name of the op the worker runs ("" in a symmetric benchmark).
func (w *Worker) Op() string { return w.op.Name }

// Group is the worker's group instance (its Value is nil without GroupSetup).
func (w *Worker) Group() *Group { return w.group }

// Trial is the benchmark-scope state.
func (w *Worker) Trial() *Trial { return w.trial }

// Rand is the worker's own generator, seeded from the run's seed and the
// worker's ID. It is not safe for use by other goroutines.
func (w *Worker) Rand() *rand.Rand { return w.rng }

// OnIteration registers goroutine-scope iteration hooks.
func (w *Worker) OnIteration(setup, teardown func() error) { w.onIteration(setup, teardown) }

// OnInvocation registers goroutine-scope invocation hooks.
func (w *Worker) OnInvocation(setup, teardown func() error) { w.onInvocation(setup, teardown) }

// OnTeardown registers the goroutine state's trial-level teardown.
func (w *Worker) OnTeardown(f func() error) { w.teardown = append(w.teardown, f) }

// InWindow reports whether the worker is inside its measured window (JMH's
// Control.startMeasurement && !stopMeasurement, per worker). The body may
// call it, for example to stop producing work once the window has closed.
func (w *Worker) InWindow() bool { return w.inWindow }

// Sink consumes a result so the compiler cannot delete the work that made
// it: the value is folded into the worker's sink word, which the harness
// reads after the trial.
func (w *Worker) Sink(v uint64) { w.sink = w.sink*31 + v }

// Counter returns a new custom metric counter of this worker. The unit must
// end in "/op" ("hits/op", "bytes-read/op"): the harness reports the
// counter's growth during the measured window divided by the measured ops,
// summed over the workers of each op. Counters are per worker and not safe
// for concurrent use.
func (w *Worker) Counter(unit string) *Counter {
	if !strings.HasSuffix(unit, "/op") || strings.ContainsAny(unit, " \t") || len(unit) <= len("/op") {
		panic(fmt.Sprintf("harness: counter unit %q must end in /op and hold no spaces", unit))
	}
	c := &Counter{unit: unit}
	w.counters = append(w.counters, c)
	return c
}

// Counter is a custom per-op metric of one worker.
type Counter struct {
	// Whole and fractional amounts are kept apart: an op that adds an
	// integer pays an integer add, not a conversion and a floating-point
	// add whose latency each op's add must wait out (4 ns of a 20 ns op).
	i    int64
	f    float64
	unit string
	_    [40]byte // keep workers' counters on separate cache lines
}

// Add adds n to the counter.
func (c *Counter) Add(n int64) { c.i += n }

// AddFloat adds a fractional amount, such as one run's hit percentage
// (the harness then reports its mean per op).
func (c *Counter) AddFloat(v float64) { c.f += v }

// value is the counter's total.
func (c *Counter) value() float64 { return float64(c.i) + c.f }
