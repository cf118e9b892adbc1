package session

import (
	"errors"

	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// UsageError is bad input: the command exits 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// ExitCode is 2.
func (UsageError) ExitCode() int { return 2 }

// FailedError is a run that ran but failed or regressed: the command
// exits 1. Its message is Msg, or Err's when Msg is empty (an InputError
// that names options, as [Failed] makes).
type FailedError struct {
	Msg string
	Err error
}

func (e FailedError) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

func (e FailedError) Unwrap() error { return e.Err }

// ExitCode is 1.
func (FailedError) ExitCode() int { return 1 }

// keptError is a write that failed after every result was written.
type keptError struct{ error }

// RevisionError is err of package revision as the command's error: bad
// input (an unknown revision, a dirty tree) or a failure (git, a build).
func RevisionError(err error) error {
	var ue *revision.UsageError
	if errors.As(err, &ue) {
		return UsageError{err}
	}
	return FailedError{Msg: err.Error()}
}
