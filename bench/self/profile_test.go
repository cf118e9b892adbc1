package self

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

func TestMain(m *testing.M) {
	if engine.IsChild() {
		os.Exit(engine.ChildMain(harness.Default))
	}
	testenv.NoExitSleep()
	os.Exit(m.Run())
}

// TestProfilesOfTheSelfSuite: the block and mutex summaries of the
// contended mutex op name its body with a non-zero delay per op, and the
// CPU summary of the fixed-cost kernel names Kernel.
func TestProfilesOfTheSelfSuite(t *testing.T) {
	o := engine.DefaultOptions()
	o.Suite, o.Bench, o.Forks = "self", "^Benchmark(Mutex|Kernel)$", 1
	o.Warmup = result.IterSpec{Count: 1, Time: 20 * time.Millisecond}
	o.Measure = result.IterSpec{Count: 2, Time: 150 * time.Millisecond}
	o.Profiles = []profile.Kind{profile.CPU, profile.Block, profile.Mutex}
	exe, _ := os.Executable()
	cases, err := o.Plan(harness.Default)
	if err != nil {
		t.Fatal(err)
	}
	rn := &engine.Runner{Executable: exe, ProfileDir: t.TempDir()}
	run, err := rn.Run(t.Context(), o, cases)
	if err != nil || run.Failed() {
		t.Fatalf("run: %v", err)
	}
	for _, c := range run.Cases {
		for _, pr := range c.Profiles {
			if pr.Err != nil {
				t.Fatalf("%s %s: %v", c.Case.Name(), pr.Kind, pr.Err)
			}
			s, err := profile.Summarize(pr.Path, profile.Kind(pr.Kind), pr.Ops)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Top) == 0 {
				if strings.TrimPrefix(c.Case.Benchmark, "Benchmark") == "Mutex" {
					t.Errorf("%s %s: empty profile", c.Case.Name(), pr.Kind)
				}
				continue
			}
			top := s.Top[0]
			switch {
			case strings.TrimPrefix(c.Case.Benchmark, "Benchmark") == "Kernel" && pr.Kind == string(profile.CPU):
				if !strings.HasSuffix(top.Frame, "bench/self.Kernel") {
					t.Errorf("kernel CPU profile: top frame %s, want self.Kernel (%+v)", top.Frame, s.Top)
				}
			case strings.TrimPrefix(c.Case.Benchmark, "Benchmark") == "Mutex" && pr.Kind != string(profile.CPU):
				// The op's body, with a delay; under load the runtime's own
				// locks (runtime.unlock) may rank above it.
				i := slices.IndexFunc(s.Top, func(e profile.Entry) bool {
					return strings.Contains(e.Frame, "bench/self.Benchmarks.") && e.Value > 0 && e.Count > 0
				})
				if i < 0 {
					t.Errorf("mutex %s profile: no frame of the op's body with non-zero delay among %+v", pr.Kind, s.Top)
				}
			}
		}
	}
}
