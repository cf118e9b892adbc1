package engine_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// precisionBench is an op whose forks differ by the given spread: each
// fork's op spins a number of rounds drawn once per process (from its
// PID).
func precisionBench(name string, spread int) *harness.Benchmark {
	return &harness.Benchmark{Family: "precision", Name: name, Setup: func(t *harness.Trial) error {
		rounds := 200 + (os.Getpid()*7919)%(spread+1)
		t.Run(func(w *harness.Worker) (func(), error) {
			x := uint64(1)
			return func() {
				for i := 0; i < rounds; i++ {
					x = x*6364136223846793005 + 1
				}
				w.Sink(x)
			}, nil
		})
		return nil
	}}
}

func init() {
	forkRegistry.Register(precisionBench("Quiet", 0))
	forkRegistry.Register(precisionBench("Noisy", 1600)) // forks 200 to 1800 rounds
}

func TestPrecisionStopsOnAQuietCaseAndSpendsTheBudgetOnANoisyOne(t *testing.T) {
	o := engine.DefaultOptions()
	o.Bench = "Quiet|Noisy"
	o.Forks, o.Warmup, o.Measure = 2, result.IterSpec{}, result.IterSpec{Count: 3, Ops: 50000}
	o.Precision, o.Budget = 0.10, 8*time.Second
	cases, err := o.Plan(forkRegistry)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	run, err := (&engine.Runner{}).Run(context.Background(), o, cases)
	if err != nil {
		t.Fatal(err)
	}
	forks := map[string]int{}
	width := map[string]float64{}
	for _, cr := range run.Cases {
		seen := map[int]bool{}
		for _, it := range cr.Iterations {
			seen[it.Fork] = true
		}
		forks[cr.Case.Benchmark], width[cr.Case.Benchmark] = len(seen), engine.RelativeHalfWidth(cr)
		t.Logf("%s: %d forks, ±%.2f %%", cr.Case.Benchmark, len(seen), 100*width[cr.Case.Benchmark])
	}
	// The quiet case stops once it is within ±10 %; the noisy one (forks
	// ±50 % apart) keeps getting forks until the budget is spent.
	if width["BenchmarkQuiet"] > o.Precision {
		t.Errorf("the quiet case stopped at ±%.2f %%, not within ±10 %%", 100*width["BenchmarkQuiet"])
	}
	if width["BenchmarkNoisy"] <= o.Precision || forks["BenchmarkNoisy"] <= forks["BenchmarkQuiet"] {
		t.Errorf("the noisy case: %d forks, ±%.2f %%; want more forks than the quiet case's %d and no ±10 %% within the budget",
			forks["BenchmarkNoisy"], 100*width["BenchmarkNoisy"], forks["BenchmarkQuiet"])
	}
	if d := time.Since(start); d < o.Budget || d > o.Budget+5*time.Second {
		t.Errorf("the run took %s: want its budget %s, and not more than a round beyond", d, o.Budget)
	}
}
