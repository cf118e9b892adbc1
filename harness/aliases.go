package harness

import (
	"runtime"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/measure"
)

// The types a benchmark author writes against. They are defined with the
// measuring core that runs them (the core reads the state a worker keeps,
// inside the measured window, without a call through an interface); these
// are the same types under the names programs use.
type (
	// Benchmark declares one benchmark: its identity, parameter axes,
	// defaults, and Setup, which builds one trial's benchmark-scoped state
	// and declares its op or group of ops.
	Benchmark = measure.Benchmark
	// Param declares one parameter axis of a benchmark (JMH's @Param).
	Param = measure.Param
	// ParamKind says how a parameter's values are validated.
	ParamKind = measure.ParamKind
	// Trial is the benchmark-scoped state of one trial (JMH's
	// Scope.Benchmark): parameters, seed, hooks, and the op it declares.
	Trial = measure.Trial
	// Op is one op of a group benchmark (JMH's @Group method).
	Op = measure.Op
	// Group is the state of one group instance (JMH's Scope.Group).
	Group = measure.Group
	// Worker is the state of one worker goroutine (JMH's Scope.Thread).
	Worker = measure.Worker
	// Counter is a worker's custom metric, reported per measured op.
	Counter = measure.Counter
	// UnitInfo is benchfmt unit metadata for a custom metric: Better is
	// "higher" or "lower" (the default), Assume "nothing" (the default)
	// or "exact".
	UnitInfo = result.Unit
)

// The kinds of a parameter's values.
const (
	// String values are taken as they are (restricted to Values' set when
	// the parameter is an enumeration, see Param.Enum).
	String = measure.String
	// Int values must parse with strconv.Atoi.
	Int = measure.Int
	// Float values must parse with strconv.ParseFloat.
	Float = measure.Float
	// Bool values must parse with strconv.ParseBool.
	Bool = measure.Bool
	// Duration values must parse with time.ParseDuration.
	Duration = measure.Duration
)

// Sink keeps v alive so the compiler cannot delete the computation that
// produced it (the same guard b.Loop applies to its body's results).
func Sink[T any](v T) { runtime.KeepAlive(v) }
