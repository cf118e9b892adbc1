package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// precisionCounter names the file whose length counts the noisy forks.
const precisionCounter = "PRECISION_TEST_COUNTER"

// precisionBench is an op of 2000 steps. A noisy one does 200 steps in
// three forks out of four and 20000 in the others, the second among them
// (counted in the file $PRECISION_TEST_COUNTER), so its forks' scores
// spread with a coefficient of variation of about 1.7 from its first two
// forks on: ±10 % would take over a thousand forks.
func precisionBench(name string, noisy bool) *harness.Benchmark {
	return &harness.Benchmark{Family: "precision", Name: name, Setup: func(t *harness.Trial) error {
		rounds := 2000
		if noisy {
			rounds = 200
			f, err := os.OpenFile(os.Getenv(precisionCounter), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := f.Write([]byte{1}); err != nil {
				return err
			}
			if fi, err := f.Stat(); err == nil && fi.Size()%4 == 2 {
				rounds = 20000
			}
		}
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
	forkRegistry.Register(precisionBench("Quiet", false))
	forkRegistry.Register(precisionBench("Noisy", true))
}

func TestPrecisionStopsOnAQuietCaseAndSpendsTheBudgetOnANoisyOne(t *testing.T) {
	if raceBuild {
		// A fork of a race build takes seconds to start and run, which
		// leaves one or two rounds in the budget: the scheduling this
		// test checks needs many. .ci/run runs it in a normal build.
		t.Skip("needs many rounds of forks within its budget; run without -race (.ci/run does)")
	}
	o := engine.DefaultOptions()
	o.Bench = "Quiet|Noisy"
	o.Forks, o.Warmup, o.Measure = 2, result.IterSpec{}, result.IterSpec{Count: 3, Ops: 4000}
	o.Precision, o.Budget = 0.10, 8*time.Second
	cases, err := o.Plan(forkRegistry)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	counter := precisionCounter + "=" + filepath.Join(t.TempDir(), "noisy-forks")
	run, err := (&engine.Runner{Env: []string{counter}}).Run(context.Background(), o, cases)
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
	// a hundredfold apart) keeps getting forks until the budget is spent. The
	// bounds are loose: the test runs beside others.
	if width["BenchmarkQuiet"] > o.Precision {
		t.Errorf("the quiet case stopped at ±%.2f %%, not within ±10 %%", 100*width["BenchmarkQuiet"])
	}
	if width["BenchmarkNoisy"] <= o.Precision || forks["BenchmarkNoisy"] <= forks["BenchmarkQuiet"] {
		t.Errorf("the noisy case: %d forks, ±%.2f %%; want more forks than the quiet case's %d and no ±10 %% within the budget",
			forks["BenchmarkNoisy"], 100*width["BenchmarkNoisy"], forks["BenchmarkQuiet"])
	}
	// The budget bounds the run: no round starts that would end past it
	// at the forks' pace so far, so the run ends within it (a round of
	// these forks takes well under 3 s) and never a round beyond.
	if d := time.Since(start); d < o.Budget-3*time.Second || d > o.Budget+5*time.Second {
		t.Errorf("the run took %s: want its budget %s spent, and not more than a round beyond", d, o.Budget)
	}
}

func TestPrecisionGivesAFailingCaseNoMoreForks(t *testing.T) {
	o := engine.DefaultOptions()
	o.Bench = "^BenchmarkPanicOp$"
	o.Forks, o.Warmup, o.Measure = 2, result.IterSpec{}, result.IterSpec{Count: 1, Ops: 10}
	o.Precision, o.Budget = 0.01, time.Minute
	cases, err := o.Plan(forkRegistry)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	run, err := (&engine.Runner{}).Run(context.Background(), o, cases)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(run.Cases[0].Failures); n != 2 || time.Since(start) > 30*time.Second {
		t.Errorf("%d failed forks in %s; want the 2 of --forks, and no forks spent on it after", n, time.Since(start))
	}
}
