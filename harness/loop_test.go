package harness

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// TestMeasuredLoopNamesRunOps: the instruction profiler collects inside
// the function profile.MeasuredLoop names, which must be the loop that
// runs a counted iteration's ops.
func TestMeasuredLoopNamesRunOps(t *testing.T) {
	if got := runtime.FuncForPC(reflect.ValueOf(runOps).Pointer()).Name(); got != profile.MeasuredLoop {
		t.Fatalf("runOps is %s, profile.MeasuredLoop says %s", got, profile.MeasuredLoop)
	}
}
