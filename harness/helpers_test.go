package harness_test

import (
	"errors"

	"github.com/ledgerbench/ledgerbench/harness"
)

func asPhase(err error, pe **harness.PhaseError) bool { return errors.As(err, pe) }
