package engine_test

import (
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// TestLaunchersRefuseWhatTheyCannotRun: a side's launcher checks the run
// before any fork: test binaries run go test cases with forks only, a
// program or this process registered cases only, and a side without a
// launcher is an error.
func TestLaunchersRefuseWhatTheyCannotRun(t *testing.T) {
	registered := engine.Case{Bench: &harness.Benchmark{Family: "test", Name: "L", Setup: func(*harness.Trial) error { return nil }}}
	goTest := engine.Case{Test: &engine.GoTest{Pkg: "example.com/p", Name: "BenchmarkX", Procs: 1}}
	o := engine.DefaultOptions()
	o.Warmup, o.Measure = result.IterSpec{}, result.IterSpec{Count: 1, Ops: 1}
	inProcess := o
	inProcess.Forks = 0
	for _, tc := range []struct {
		name  string
		o     engine.Options
		cases []engine.Case
		side  engine.Side
		want  string
	}{
		{"test binaries in process", inProcess, []engine.Case{goTest}, engine.Side{Launch: engine.TestBinaries{}}, "they need forks"},
		{"a registered case on test binaries", o, []engine.Case{registered}, engine.Side{Launch: engine.TestBinaries{}}, "test binaries run go test benchmarks only"},
		{"a go test case on a program", o, []engine.Case{goTest}, engine.Side{Launch: engine.Program{}}, "needs its package's test binary"},
		{"a go test case in process", inProcess, []engine.Case{goTest}, engine.Side{Launch: engine.InProcess{}}, "needs its package's test binary"},
		{"no launcher", o, []engine.Case{registered}, engine.Side{Name: "A"}, `side "A" has no launcher`},
	} {
		rn := &engine.Runner{}
		runs, err := rn.RunSides(t.Context(), tc.o, tc.cases, []engine.Side{tc.side})
		if runs != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, %v; want no run and %q", tc.name, runs, err, tc.want)
		}
	}
}
