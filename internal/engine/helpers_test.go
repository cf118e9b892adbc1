package engine_test

import (
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// goldenHeader is a fixed header so report output does not depend on the
// machine.
func goldenHeader() report.Header {
	return report.Header{
		GOOS: "linux", GOARCH: "amd64", CPU: "Test CPU @ 2.40GHz", Go: "go1.26.8",
		BenchctlVersion: "0.1.0", Machine: "testhost", MachineID: "0123456789ab", EnvID: "ba9876543210",
		HostPinned: "no", HostNote: "test header", Commit: "0000000000000000000000000000000000000000",
		CommitTime: "2026-11-30T00:00:00Z", Dirty: "no", Command: "benchctl run --test",
		Started: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
	}
}

// runPlanned plans o against r and runs it with rn.
func runPlanned(t *testing.T, rn *engine.Runner, r *harness.Registry, o engine.Options) (*result.Run, error) {
	t.Helper()
	cases, err := o.Plan(r)
	if err != nil {
		return nil, err
	}
	return rn.Run(t.Context(), o, cases)
}
