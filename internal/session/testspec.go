package session

import (
	"runtime"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// TestProcs is the -test.cpu of go test benchmarks under o: --threads,
// else half the CPUs in a duet, else the number of --cpus, else
// GOMAXPROCS.
func TestProcs(o engine.Options) int {
	halves, duetErr := engine.DuetCPUs(o.CPUs)
	switch {
	case o.Threads > 0:
		return o.Threads
	case o.Duet && duetErr == nil:
		return len(halves[0])
	case len(o.CPUs) > 0:
		return len(o.CPUs)
	}
	return runtime.GOMAXPROCS(0)
}

// TestSpec is what o selects of go test benchmarks.
func TestSpec(o engine.Options) revision.TestSpec {
	return revision.TestSpec{Bench: o.Bench, Procs: TestProcs(o), Timeout: o.Timeout}
}
