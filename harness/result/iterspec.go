package result

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// IterSpec says how many iterations to run and how long each one lasts:
// either a time (Time > 0) or a fixed number of op invocations per
// goroutine (Ops > 0). Its text form is "COUNTxTIME" ("3x1s", "5x200ms"),
// "COUNTxNops" ("5x1000ops") or "COUNT" alone, which keeps the default
// length of one iteration.
type IterSpec struct {
	Count int
	Time  time.Duration
	Ops   int64
}

// ParseIterSpec parses the text form of an IterSpec. A bare count takes its
// iteration length from def.
func ParseIterSpec(s string, def IterSpec) (IterSpec, error) {
	countText, lengthText, hasLength := strings.Cut(s, "x")
	count, err := strconv.Atoi(countText)
	if err != nil || count < 0 {
		return IterSpec{}, fmt.Errorf("bad iteration spec %q: want COUNTxTIME (3x1s), COUNTxNops (5x1000ops) or COUNT", s)
	}
	spec := IterSpec{Count: count, Time: def.Time, Ops: def.Ops}
	if !hasLength {
		return spec, nil
	}
	if n, ok := strings.CutSuffix(lengthText, "ops"); ok {
		ops, err := strconv.ParseInt(n, 10, 64)
		if err != nil || ops <= 0 {
			return IterSpec{}, fmt.Errorf("bad iteration spec %q: op count %q must be a positive integer", s, n)
		}
		return IterSpec{Count: count, Ops: ops}, nil
	}
	d, err := time.ParseDuration(lengthText)
	if err != nil && tooLong(lengthText) {
		return IterSpec{}, fmt.Errorf("bad iteration spec %q: iteration time %q is too long: the longest iteration time is %s", s, lengthText, maxDuration)
	}
	if err != nil || d <= 0 {
		return IterSpec{}, fmt.Errorf("bad iteration spec %q: iteration time %q must be a positive duration such as 200ms or 1s", s, lengthText)
	}
	return IterSpec{Count: count, Time: d}, nil
}

// String returns the text form that ParseIterSpec reads back.
func (s IterSpec) String() string {
	if s.Ops > 0 {
		return fmt.Sprintf("%dx%dops", s.Count, s.Ops)
	}
	return fmt.Sprintf("%dx%s", s.Count, s.Time)
}

func (s IterSpec) Validate(what string) error {
	if s.Count < 0 {
		return fmt.Errorf("%s: negative iteration count %d", what, s.Count)
	}
	if s.Ops < 0 || s.Time < 0 || (s.Ops == 0 && s.Time == 0) {
		return fmt.Errorf("%s: iteration %q needs a positive time or op count", what, s)
	}
	return nil
}

// maxDuration is the longest time.Duration, in hours as ParseDuration
// reads it back.
const maxDuration = "2562047h"

// tooLong reports whether text is a positive number and a unit that
// time.ParseDuration refused because the duration overflows.
func tooLong(text string) bool {
	num := strings.TrimRight(text, "nsuµmh")
	unit := text[len(num):]
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || unit == "" {
		return false
	}
	_, err = time.ParseDuration("1" + unit)
	return err == nil
}
