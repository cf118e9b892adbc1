package engine_test

import (
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// roundsCase builds a case result whose fork n has the measured scores of
// scores[n-1].
func roundsCase(scores ...[]float64) *result.CaseResult {
	cr := &result.CaseResult{Mode: result.AverageTime}
	for f, xs := range scores {
		for i, x := range xs {
			cr.Iterations = append(cr.Iterations, result.Iteration{Fork: f + 1, Index: i, Total: result.OpStats{Ops: 1, NsPerOp: x}})
		}
	}
	return cr
}

func TestPairedChangeByRounds(t *testing.T) {
	// Round 2 is slow on both sides; the experiment is 10 % slower in
	// every round.
	a := roundsCase([]float64{100, 101, 99}, []float64{150, 151, 149}, []float64{100, 100, 100})
	b := roundsCase([]float64{110, 111, 109}, []float64{164, 165, 163}, []float64{110, 110, 110})
	c, err := engine.PairedChange(a, b, false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Paired || c.N != 3 || math.Abs(c.Ratio-1.1) > 5e-3 || engine.HalfWidth(c) > 0.01 {
		t.Errorf("change %+v, half width %g", c, engine.HalfWidth(c))
	}
	// A fork that failed on one side leaves its round unpaired.
	short := roundsCase([]float64{110}, nil, []float64{110})
	if c, err := engine.PairedChange(a, short, false); err != nil || c.N != 2 {
		t.Errorf("%+v %v: want the 2 complete rounds", c, err)
	}
	if _, err := engine.PairedChange(a, roundsCase([]float64{1}), false); err == nil {
		t.Error("one pair gave an interval")
	}
	runs := []*result.Run{{Cases: []*result.CaseResult{a}}, {Cases: []*result.CaseResult{b}}}
	if !engine.Precise(engine.Options{Precision: 0.01}, runs, 0) || engine.Precise(engine.Options{Precision: 0.001}, runs, 0) {
		t.Error("Precise does not follow the paired interval")
	}
	if !engine.Precise(engine.Options{Detect: 0.05}, runs, 0) || engine.Precise(engine.Options{Detect: 0.0001}, runs, 0) {
		t.Error("Precise does not follow the detectable change")
	}
}

// TestDetectPlansBeforeMeasuringMore: an A/B run asked to detect a change
// its pairs' spread cannot reach within the budget stops after its first
// rounds with a PlanError; with Anyway it measures until the budget.
func TestDetectPlansBeforeMeasuringMore(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := engine.DefaultOptions()
	o.Bench, o.Forks = "^BenchmarkGood$", 3
	o.Warmup = result.IterSpec{Count: 1, Time: 5 * time.Millisecond}
	o.Measure = result.IterSpec{Count: 2, Time: 5 * time.Millisecond}
	o.Detect, o.Budget = 0.00001, 20*time.Second
	cases, err := o.Plan(forkRegistry)
	if err != nil {
		t.Fatal(err)
	}
	rn := &engine.Runner{Executable: exe}
	sides := []engine.Side{{Name: "a", Launch: engine.Program{}}, {Name: "b", Launch: engine.Program{}}}
	start := time.Now()
	runs, err := rn.RunSides(t.Context(), o, cases, sides)
	first := time.Since(start) // of 3 rounds
	var pe *engine.PlanError
	if !errors.As(err, &pe) || pe.RoundsSoFar != 3 || !strings.Contains(err.Error(), "cannot reach a detectable change of 0.001 %") {
		t.Fatalf("err = %v, want a plan error after 3 rounds", err)
	}
	if n := len(runs[1].Cases[0].ForkScores()); n != 3 {
		t.Errorf("%d forks measured, want the 3 first rounds", n)
	}
	o.Anyway, o.Budget = true, 2*first+time.Second
	runs, err = rn.RunSides(t.Context(), o, cases, sides)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(runs[1].Cases[0].ForkScores()); n <= 3 {
		t.Errorf("with Anyway, %d forks: want rounds added until the budget", n)
	}
}

func init() {
	var n uint64
	forkRegistry.Register(simple("Undecided", nil, func() { n++ }))
}

// TestUntilDecidedStopsDecidedCases: after the first rounds, a case
// Runner.Decided calls decided gets no more rounds and the others get
// rounds until they are decided; the callback sees the runs so far.
func TestUntilDecidedStopsDecidedCases(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := engine.DefaultOptions()
	o.Bench, o.Forks = "^BenchmarkGood$|^BenchmarkUndecided$", 3
	o.Warmup = result.IterSpec{Count: 1, Time: 5 * time.Millisecond}
	o.Measure = result.IterSpec{Count: 2, Time: 5 * time.Millisecond}
	o.UntilDecided, o.Budget = true, time.Minute
	cases, err := o.Plan(forkRegistry)
	if err != nil || len(cases) != 2 {
		t.Fatalf("%d cases, %v", len(cases), err)
	}
	var looks []int
	rn := &engine.Runner{Executable: exe, Decided: func(runs []*result.Run) []bool {
		rounds := len(runs[0].Cases[1].ForkScores())
		looks = append(looks, rounds)
		// Case 0 is decided from the first look; case 1 after 6 rounds.
		return []bool{true, rounds >= 6}
	}}
	sides := []engine.Side{{Name: "a", Launch: engine.Program{}}, {Name: "b", Launch: engine.Program{}}}
	runs, err := rn.RunSides(t.Context(), o, cases, sides)
	if err != nil {
		t.Fatal(err)
	}
	for s, run := range runs {
		if n0, n1 := len(run.Cases[0].ForkScores()), len(run.Cases[1].ForkScores()); n0 != 3 || n1 != 6 {
			t.Errorf("side %d: %d and %d rounds, want 3 (decided at the first look) and 6", s, n0, n1)
		}
	}
	if want := []int{3, 4, 5, 6}; !slices.Equal(looks, want) {
		t.Errorf("looked after rounds %v, want %v", looks, want)
	}
	o.Forks = 2
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "deciding round by round starts from at least 3 rounds") {
		t.Errorf("2 first rounds: %v", err)
	}
}

func init() {
	var n uint64
	// A setup far longer than the plan's estimate of a fork, as a go test
	// benchmark that rebuilds its data under StopTimer is.
	forkRegistry.Register(simple("SlowSetup", func(*harness.Trial) error {
		time.Sleep(400 * time.Millisecond)
		return nil
	}, func() { n++ }))
}

// TestBudgetBoundsTheFirstRounds: forks that take far longer than
// planned do not carry an until-decided run past its budget: it stops
// before the first round that would end past it, says how many of its
// first rounds ran, and ends within the budget and at most one round
// beyond it.
func TestBudgetBoundsTheFirstRounds(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := engine.DefaultOptions()
	o.Bench, o.Forks = "^BenchmarkSlowSetup$", 8
	o.Warmup = result.IterSpec{Count: 1, Time: 5 * time.Millisecond}
	o.Measure = result.IterSpec{Count: 1, Time: 5 * time.Millisecond}
	o.UntilDecided, o.Budget = true, 3*time.Second
	cases, err := o.Plan(forkRegistry)
	if err != nil {
		t.Fatal(err)
	}
	rn := &engine.Runner{Executable: exe, Decided: func([]*result.Run) []bool { return []bool{false} }}
	sides := []engine.Side{{Name: "a", Launch: engine.Program{}}, {Name: "b", Launch: engine.Program{}}}
	start := time.Now()
	runs, err := rn.RunSides(t.Context(), o, cases, sides)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	rounds := len(runs[1].Cases[0].ForkScores())
	if rounds < 1 || rounds >= o.Forks || runs[0].BudgetRounds != rounds || runs[1].BudgetRounds != rounds {
		t.Fatalf("%d rounds ran, BudgetRounds %d/%d: want fewer than the %d planned, and said", rounds, runs[0].BudgetRounds, runs[1].BudgetRounds, o.Forks)
	}
	if round := took / time.Duration(rounds); took > o.Budget+round {
		t.Errorf("%d rounds took %s: more than one round (%s) past the budget %s", rounds, took, round, o.Budget)
	}
	if o.UntilDecided = false; o.Budgeted() {
		t.Error("a run of fixed rounds is bounded by the budget")
	}
}
