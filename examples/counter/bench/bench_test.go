package bench

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
)

// go test -bench . runs the same declarations as the benchmark program,
// under the same names (BenchmarkAdd/impl=mutex).

func BenchmarkAdd(b *testing.B)             { harness.RunDefault(b, "counter/Add") }
func BenchmarkAddWhileReading(b *testing.B) { harness.RunDefault(b, "counter/AddWhileReading") }
