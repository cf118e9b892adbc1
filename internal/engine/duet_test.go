package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// onFirstCPU reports whether this process may run on the first CPU of the
// duet's first half, which the test names in DUET_FIRST_CPU: in a duet,
// one side's fork each round.
func onFirstCPU() bool {
	cpu, err := strconv.Atoi(os.Getenv("DUET_FIRST_CPU"))
	var set unix.CPUSet
	return err == nil && unix.SchedGetaffinity(0, &set) == nil && set.IsSet(cpu)
}

func init() {
	var n uint64
	work := func() { n++ }
	// DuetSetup takes 150 ms longer to set up on the first half's CPUs,
	// so the side there is late to start unless the duet waits for it.
	forkRegistry.Register(simple("DuetSetup", func(*harness.Trial) error {
		if onFirstCPU() {
			time.Sleep(150 * time.Millisecond)
		}
		return nil
	}, work))
	forkRegistry.Register(simple("DuetFailFirst", func(*harness.Trial) error {
		if onFirstCPU() {
			return os.ErrInvalid
		}
		return nil
	}, work))
}

func duetRun(t *testing.T, bench string, forks int) ([]*result.Run, [2][]int, string) {
	t.Helper()
	halves, err := engine.DuetCPUs(nil)
	if err != nil {
		t.Skip(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := engine.DefaultOptions()
	o.Bench, o.Forks, o.Duet = bench, forks, true
	o.Warmup = result.IterSpec{Count: 1, Time: 40 * time.Millisecond}
	o.Measure = result.IterSpec{Count: 3, Time: 40 * time.Millisecond}
	o.Timeout = 10 * time.Second
	cases, err := o.Plan(forkRegistry)
	if err != nil {
		t.Fatal(err)
	}
	logs := t.TempDir()
	rn := &engine.Runner{Executable: exe, LogDir: logs, Env: append(os.Environ(), fmt.Sprintf("DUET_FIRST_CPU=%d", halves[0][0]))}
	sides := []engine.Side{{Name: "baseline", Launch: engine.Program{}}, {Name: "experiment", Launch: engine.Program{}}}
	runs, err := rn.RunSides(t.Context(), o, cases, sides)
	if err != nil {
		t.Fatal(err)
	}
	return runs, halves, logs
}

// TestDuetForksStartAndStopTogether observes a duet from its forks: each
// round's two forks ran on disjoint halves of the CPUs, swapped every
// round, and their measured iterations started and ended together,
// though one side took 150 ms longer to set up.
func TestDuetForksStartAndStopTogether(t *testing.T) {
	runs, halves, logs := duetRun(t, "^BenchmarkDuetSetup$", 4)
	if !runs[0].Config.Duet || !strings.Contains(strings.Join(runs[0].Order, " "), "1:BenchmarkDuetSetup:baseline@") {
		t.Errorf("config %+v order %q", runs[0].Config, runs[0].Order)
	}
	a, b := runs[0].Cases[0], runs[1].Cases[0]
	if len(a.Failures)+len(b.Failures) > 0 {
		t.Fatalf("failures: %v %v", a.Failures, b.Failures)
	}
	for k := range 4 {
		want := [2][]int{halves[0], halves[1]}
		if k%2 == 1 {
			want[0], want[1] = want[1], want[0]
		}
		if !slices.Equal(a.ForkCPUs[k], want[0]) || !slices.Equal(b.ForkCPUs[k], want[1]) {
			t.Errorf("fork %d ran on %v and %v, want %v and %v", k+1, a.ForkCPUs[k], b.ForkCPUs[k], want[0], want[1])
		}
	}
	type key struct{ fork, index int }
	at := map[key]result.Iteration{}
	for _, it := range a.Iterations {
		if !it.Warmup {
			at[key{it.Fork, it.Index}] = it
		}
	}
	// Both sides kept one schedule, whose first start waited for the
	// slower setup; a busy host (the other test packages run beside
	// this one, under the race detector) may wake one process late, so
	// only a quarter of the pairs must have started within 50 ms of each
	// other (with 20 ms, CI's run once saw 2 of 12), and none more than
	// 250 ms apart.
	const tol, far = 50 * time.Millisecond, 250 * time.Millisecond
	n, together := 0, 0
	for _, it := range b.Iterations {
		other, ok := at[key{it.Fork, it.Index}]
		if it.Warmup || !ok {
			continue
		}
		n++
		if it.ScheduledUnixNano == 0 || it.ScheduledUnixNano != other.ScheduledUnixNano {
			t.Errorf("fork %d iteration %d: scheduled at %d and %d", it.Fork, it.Index, it.ScheduledUnixNano, other.ScheduledUnixNano)
		}
		if it.StartUnixNano < it.ScheduledUnixNano || other.StartUnixNano < other.ScheduledUnixNano {
			t.Errorf("fork %d iteration %d started before its schedule", it.Fork, it.Index)
		}
		start := time.Duration(it.StartUnixNano - other.StartUnixNano).Abs()
		if start <= tol {
			together++
		}
		if start > far {
			t.Errorf("fork %d iteration %d: the sides started %s apart", it.Fork, it.Index, start)
		}
	}
	if n != 12 || together < 3 {
		t.Errorf("%d of %d measured iterations started within %s of their pair's; want 12, at least 3 of them together", together, n, tol)
	}
	for _, side := range []string{"baseline", "experiment"} {
		if _, err := os.Stat(filepath.Join(logs, "BenchmarkDuetSetup."+side+".fork1.log")); err != nil {
			t.Errorf("each side has its own log: %v", err)
		}
	}
}

// TestDuetPartnerThatFailsReleasesTheOther: a fork that fails in setup
// never arrives at the schedule; its pair runs alone instead of waiting.
func TestDuetPartnerThatFailsReleasesTheOther(t *testing.T) {
	start := time.Now()
	runs, _, _ := duetRun(t, "^BenchmarkDuetFailFirst$", 2)
	if time.Since(start) > 8*time.Second {
		t.Errorf("the duet took %s: a fork waited for its failed pair", time.Since(start))
	}
	a, b := runs[0].Cases[0], runs[1].Cases[0]
	// Round 1 puts the baseline on the first half, round 2 the experiment.
	if len(a.Failures) != 1 || a.Failures[0].Fork != 1 || len(b.Failures) != 1 || b.Failures[0].Fork != 2 {
		t.Fatalf("failures: %v %v", a.Failures, b.Failures)
	}
	if len(a.Iterations) != 4 || len(b.Iterations) != 4 {
		t.Errorf("the forks that did not fail ran %d and %d iterations, want 4 each", len(a.Iterations), len(b.Iterations))
	}
}

func TestDuetRefusesWhatCannotPair(t *testing.T) {
	exe, _ := os.Executable()
	o := engine.DefaultOptions()
	o.Bench, o.Duet = "^BenchmarkGood$", true
	cases, err := o.Plan(forkRegistry)
	if err != nil {
		t.Fatal(err)
	}
	two := []engine.Side{{Name: "a", Launch: engine.Program{}}, {Name: "b", Launch: engine.Program{}}}
	for _, tc := range []struct {
		name  string
		cpus  []int
		forks int
		sides []engine.Side
		want  string
	}{
		{"one side", nil, 3, two[:1], "two sides"},
		{"one CPU", []int{0}, 3, two, "at least 2 CPUs"},
		{"no forks", nil, 0, two, "needs forks"},
	} {
		o := o
		o.Forks = tc.forks
		rn := &engine.Runner{Executable: exe, CPUs: tc.cpus}
		_, err := rn.RunSides(t.Context(), o, cases, tc.sides)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error about %q", tc.name, err, tc.want)
		}
	}
}
