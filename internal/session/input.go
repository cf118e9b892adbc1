package session

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// InputError is bad input worded with the options it concerns in braces
// ("{Good} and {Bad} are required"), so that each caller names them its
// own way: Error names them as the library's option fields ("Good and
// Bad are required"); a command line renders them as its flags
// ([InputError.Render]). The library's errors name no flag.
type InputError struct {
	Text string
	Err  error // wrapped, when the text ends with its words
}

// Input is an InputError of format, its arguments formatted as
// fmt.Sprintf does, and %w wrapping an error as fmt.Errorf does.
func Input(format string, args ...any) error { return UsageError{inputError(format, args...)} }

// Failed is a FailedError worded as [Input] words bad input: options in
// braces, for each caller to name its way.
func Failed(format string, args ...any) error { return FailedError{Err: inputError(format, args...)} }

func inputError(format string, args ...any) InputError {
	wrapped := fmt.Errorf(format, args...)
	e := InputError{Text: wrapped.Error()}
	if u, ok := wrapped.(interface{ Unwrap() error }); ok {
		e.Err = u.Unwrap()
	}
	return e
}

// Words is err's message, the options of its InputError named by name.
func Words(err error, name func(option string) string) string {
	msg := err.Error()
	var ie InputError
	if !errors.As(err, &ie) {
		return msg
	}
	return strings.Replace(msg, ie.Error(), ie.Render(name), 1)
}

var optionRef = regexp.MustCompile(`\{([A-Z][A-Za-z]*)\}`)

func (e InputError) Error() string { return optionRef.ReplaceAllString(e.Text, "$1") }
func (e InputError) Unwrap() error { return e.Err }

// Render is the text with each option named by name.
func (e InputError) Render(name func(option string) string) string {
	return optionRef.ReplaceAllStringFunc(e.Text, func(m string) string { return name(strings.Trim(m, "{}")) })
}

// CheckVerdicts refuses a significance level or a margin (in percent) out
// of range.
func CheckVerdicts(alpha, minChange float64) error {
	if !(alpha > 0 && alpha < 1) {
		return Input("{Alpha} %g: must be between 0 and 1", alpha)
	}
	if !(minChange >= 0 && minChange < 100) {
		return Input("{MinChange} %g: must be a percentage from 0 up to (not including) 100", minChange)
	}
	return nil
}
