package ab

import (
	"time"

	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// left is what the budget of a budgeted comparison (engine.Options.
// Budgeted) leaves of the whole command, which began at o.Started; the
// engine's own budget when the comparison is not budgeted.
func (o Options) left() time.Duration {
	if !o.Engine.Budgeted() || o.Started.IsZero() {
		return o.Engine.Budget
	}
	return o.Engine.Budget - time.Since(o.Started)
}

// fitBudget bounds eo's measurement of cases by what the budget leaves
// (left): refused before anything is measured when not even the rounds
// of a first verdict (verdict.MinSamples) fit at the planned length of a
// fork; otherwise the engine stops before any round that would end past
// it, first rounds included.
func fitBudget(eo *engine.Options, cases int, left time.Duration) error {
	if !eo.Budgeted() {
		return nil
	}
	least := *eo
	least.Forks = verdict.MinSamples
	if need := engine.FirstRounds(least, cases); need > left {
		return session.Input("{Budget} %s leaves %s, shorter than the first %d rounds of %d cases take (about %s), the fewest a verdict needs: nothing was measured",
			eo.Budget, max(left, 0).Round(time.Second), verdict.MinSamples, cases, need.Round(time.Second))
	}
	eo.Budget = left
	return nil
}
