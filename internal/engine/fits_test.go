package engine

import (
	"context"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// sleeper is a launcher whose every fork takes d and records one
// measured iteration: the budget's arithmetic without processes.
type sleeper struct{ d time.Duration }

func (sleeper) check(Options, []Case) error { return nil }

func (s sleeper) fork(ctx context.Context, _ *Runner, _ Options, _ Case, forkNo int, cr *result.CaseResult) *result.ForkError {
	time.Sleep(s.d)
	cr.Iterations = append(cr.Iterations, result.Iteration{Fork: forkNo, Total: result.OpStats{Ops: 1, NsPerOp: 100}})
	return nil
}

func (sleeper) profile(context.Context, *Runner, Options, profile.Kind, Case, *result.CaseResult, string) (result.ProfileRun, string) {
	return result.ProfileRun{}, "not profiled"
}

// TestBudgetCountsOnlyTheOpenCases: a round after the first ones runs
// only the cases still open, so whether it fits the budget is asked of
// those, not of every case. With forks of 200 ms, 2 cases and 2 sides,
// 3 first rounds take 2.4 s; a 3 s budget holds a 4th round of the one
// open case (0.4 s) but not of both (0.8 s), nor a 5th. It used to be
// asked of both, and the run stopped after its first rounds.
func TestBudgetCountsOnlyTheOpenCases(t *testing.T) {
	o := DefaultOptions()
	o.Forks, o.UntilDecided, o.Budget = 3, true, 3*time.Second
	cases := []Case{{Test: &GoTest{Pkg: "p", Name: "BenchmarkDecided"}}, {Test: &GoTest{Pkg: "p", Name: "BenchmarkOpen"}}}
	rn := &Runner{Decided: func([]*result.Run) []bool { return []bool{true, false} }}
	sides := []Side{{Name: "a", Launch: sleeper{200 * time.Millisecond}}, {Name: "b", Launch: sleeper{200 * time.Millisecond}}}
	runs, err := rn.RunSides(t.Context(), o, cases, sides)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		if n0, n1 := len(run.Cases[0].ForkScores()), len(run.Cases[1].ForkScores()); n0 != 3 || n1 != 4 {
			t.Errorf("side %s: %d and %d rounds, want 3 (decided) and 4 (one more round of the open case fits)", run.Side, n0, n1)
		}
		if run.BudgetRounds != 0 {
			t.Errorf("side %s: BudgetRounds %d: the first rounds all ran", run.Side, run.BudgetRounds)
		}
	}
}
