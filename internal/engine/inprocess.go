package engine

import (
	"errors"
	"runtime"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// inProcess runs the trial of plan p in this process (the InProcess
// launcher: Options.Forks 0, less trustworthy) into cr.
func (rn *Runner) inProcess(c Case, p *harness.Plan, cr *result.CaseResult) *result.ForkError {
	sink, err := harness.Run(c.Bench, p, func(it *result.Iteration) error {
		cr.Iterations = append(cr.Iterations, *it)
		return nil
	})
	cr.Sink ^= sink
	cr.Procs = runtime.GOMAXPROCS(0)
	if err != nil {
		fe := &result.ForkError{Message: err.Error()}
		var pe *harness.PhaseError
		if errors.As(err, &pe) {
			fe.Phase, fe.Message, fe.Stack = pe.Phase, pe.Err.Error(), pe.Stack
		}
		return fe
	}
	return nil
}
