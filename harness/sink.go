package harness

import (
	"runtime"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// UnitInfo is benchfmt unit metadata for a custom metric: Better is
// "higher" or "lower" (the default), Assume "nothing" (the default) or
// "exact".
type UnitInfo = result.Unit

// Sink keeps v alive so the compiler cannot delete the computation that
// produced it (the same guard b.Loop applies to its body's results).
func Sink[T any](v T) { runtime.KeepAlive(v) }
