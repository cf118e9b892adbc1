package engine_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// TestDescribedCaseRunsInForks: a case described, sent as JSON and made
// a case again runs in a program's forks as the registered one does:
// the same name, result identity (units, axis) and plan; in this
// process it is refused, and a go test benchmark cannot be described.
func TestDescribedCaseRunsInForks(t *testing.T) {
	o := engine.DefaultOptions()
	o.Bench = "^BenchmarkGood$"
	o.Forks = 2
	o.Warmup = result.IterSpec{}
	o.Measure = result.IterSpec{Count: 2, Ops: 1000}
	cases, err := o.Plan(forkRegistry)
	if err != nil || len(cases) != 1 {
		t.Fatalf("plan: %v %v", cases, err)
	}
	d, err := engine.Describe(cases[0])
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back engine.Described
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	c := back.Runnable()
	if c.Name() != cases[0].Name() || !reflect.DeepEqual(c.Result(), cases[0].Result()) {
		t.Fatalf("described case %s %+v, registered %s %+v", c.Name(), c.Result(), cases[0].Name(), cases[0].Result())
	}
	exe, _ := os.Executable()
	rn := &engine.Runner{Executable: exe, LogDir: t.TempDir()}
	run, err := rn.Run(t.Context(), o, []engine.Case{c})
	if err != nil || run.Failed() {
		t.Fatalf("run: %v %+v", err, run)
	}
	if got := run.Cases[0]; !reflect.DeepEqual(got.Case, cases[0].Result()) || len(got.Iterations) != 4 {
		t.Errorf("the described case ran as %+v with %d iterations; want %+v and 4", got.Case, len(got.Iterations), cases[0].Result())
	}
	o.Forks = 0
	if _, err := rn.Run(t.Context(), o, []engine.Case{c}); err == nil || !strings.Contains(err.Error(), "description alone") {
		t.Errorf("a described case in this process: %v, want it refused", err)
	}
	// A go test benchmark is described with its package, name and
	// -test.cpu, and is one again once read back.
	gt := engine.Case{Test: &engine.GoTest{Pkg: "example.com/p", Name: "BenchmarkX/n=1", Procs: 2}}
	d, err = engine.Describe(gt)
	if err != nil {
		t.Fatal(err)
	}
	data, _ = json.Marshal(d)
	back = engine.Described{}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if c := back.Runnable(); c.Test == nil || *c.Test != *gt.Test || c.Name() != "BenchmarkX/n=1" || !reflect.DeepEqual(c.Result(), gt.Result()) {
		t.Errorf("a go test benchmark described and read back: %+v", c)
	}
}
