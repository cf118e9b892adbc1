package harness_test

import (
	"errors"
	"fmt"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

func asPhase(err error, pe **harness.PhaseError) bool { return errors.As(err, pe) }

// runPlan runs p's trial from r in this process, with the planner's
// defaults for what p leaves unset.
func runPlan(r *harness.Registry, p *harness.Plan, emit func(*result.Iteration) error) error {
	b, ok := r.Lookup(p.Benchmark)
	if !ok {
		return fmt.Errorf("no benchmark %q", p.Benchmark)
	}
	if p.Mode == "" {
		p.Mode = b.Mode
	}
	if p.Mode == "" {
		p.Mode = result.AverageTime
	}
	if p.ProbeTolerance == 0 {
		p.ProbeTolerance = 0.05
	}
	_, err := harness.Run(b, p, emit)
	return err
}
