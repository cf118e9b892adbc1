package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// ParamKind says how a parameter's values are validated.
type ParamKind int

const (
	// String values are taken as they are (restricted to Values' set when
	// the parameter is an enumeration, see [Param.Enum]).
	String ParamKind = iota
	// Int values must parse with strconv.Atoi.
	Int
	// Float values must parse with strconv.ParseFloat.
	Float
	// Bool values must parse with strconv.ParseBool.
	Bool
	// Duration values must parse with time.ParseDuration.
	Duration
)

func (k ParamKind) String() string {
	switch k {
	case Int:
		return "int"
	case Float:
		return "float"
	case Bool:
		return "bool"
	case Duration:
		return "duration"
	}
	return "string"
}

// Param declares one parameter axis of a benchmark, like JMH's @Param.
// Values are the defaults; the run expands all parameters to their
// cartesian product, and `-p name=v1,v2` replaces a parameter's values.
type Param struct {
	Name   string
	Values []string
	Kind   ParamKind
	// Enum restricts the parameter to the listed values (defaults to
	// Values when Enum is true and Allowed is empty).
	Enum    bool
	Allowed []string
	Doc     string
	// Valid, when set, checks each value beyond its Kind (a byte size, a
	// path that must exist): a value it refuses is bad input, found
	// before anything runs.
	Valid func(value string) error
	// Baseline, when set, makes this parameter the benchmark's
	// implementation axis and names the value the others are compared
	// against: after a run, the pull-request table compares each other
	// value of the axis with it. It must be a valid value; at most one
	// parameter of a benchmark has one.
	Baseline string
	// Quick, when set, are the values a quick run uses instead of Values
	// (unless the run sets the parameter): a smaller dataset of the same
	// shape, for a benchmark whose full one would take most of a quick
	// run's time.
	Quick []string
}

func (p Param) allowed() []string {
	if !p.Enum {
		return nil
	}
	if len(p.Allowed) > 0 {
		return p.Allowed
	}
	return p.Values
}

// Check reports whether v is a valid value of p.
func (p Param) Check(v string) error {
	var err error
	switch p.Kind {
	case Int:
		_, err = strconv.Atoi(v)
	case Float:
		_, err = strconv.ParseFloat(v, 64)
	case Bool:
		_, err = strconv.ParseBool(v)
	case Duration:
		_, err = time.ParseDuration(v)
	}
	if err != nil {
		return fmt.Errorf("parameter %s: value %q is not a valid %s", p.Name, v, p.Kind)
	}
	if v == "" || strings.ContainsAny(v, "/= \t\n,") {
		return fmt.Errorf("parameter %s: value %q is empty or holds one of / = , or a space", p.Name, v)
	}
	if a := p.allowed(); a != nil && !slices.Contains(a, v) {
		return fmt.Errorf("parameter %s: unknown value %q (valid: %s)", p.Name, v, strings.Join(a, ", "))
	}
	if p.Valid != nil {
		if err := p.Valid(v); err != nil {
			return fmt.Errorf("parameter %s: value %q: %w", p.Name, v, err)
		}
	}
	return nil
}

// Expand returns the cartesian product of the benchmark's parameters in
// declaration order (the last parameter varies fastest), with o replacing
// defaults. Overrides that name no parameter of b are ignored here: the
// planner checks them against the whole selection.
func Expand(b *Benchmark, o map[string][]string) ([]result.Params, error) {
	points := []result.Params{nil}
	for _, p := range b.Params {
		values := p.Values
		if ov, ok := o[p.Name]; ok {
			values = ov
		}
		if len(values) == 0 {
			return nil, fmt.Errorf("%s: parameter %s has no values", b.FullName(), p.Name)
		}
		for _, v := range values {
			if err := p.Check(v); err != nil {
				return nil, fmt.Errorf("%s: %w", b.FullName(), err)
			}
		}
		next := make([]result.Params, 0, len(points)*len(values))
		for _, pt := range points {
			for _, v := range values {
				np := append(slices.Clip(pt), result.ParamValue{Name: p.Name, Value: v})
				next = append(next, np)
			}
		}
		points = next
	}
	return points, nil
}
