package ab

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/explain"
)

// An explaining fork's window is the measured iterations' time in one,
// at least MinExplainWindow where runtime/pprof samples it (perf's
// window is capped by the engine); its warmup the first warmup iteration.
// The allocation fork's is one measured iteration.
func TestExplainForkPlan(t *testing.T) {
	for _, tc := range []struct {
		m       result.IterSpec
		sampled bool
		want    result.IterSpec
	}{
		{result.IterSpec{Count: 5, Time: time.Second}, false, result.IterSpec{Count: 1, Time: 5 * time.Second}},
		{result.IterSpec{Count: 3, Time: 20 * time.Millisecond}, false, result.IterSpec{Count: 1, Time: MinExplainWindow}},
		{result.IterSpec{Count: 3, Time: 20 * time.Millisecond}, true, result.IterSpec{Count: 1, Time: 60 * time.Millisecond}},
		{result.IterSpec{Count: 3, Ops: 1000}, false, result.IterSpec{Count: 3, Ops: 1000}}, // ops, not time: as measured
	} {
		if got := explainWindow(tc.m, tc.sampled); got != tc.want {
			t.Errorf("explainWindow(%+v, sampled %v) = %+v, want %+v", tc.m, tc.sampled, got, tc.want)
		}
	}
	// The allocation fork's window is one measured iteration: its counts
	// need no more ops.
	for m, want := range map[result.IterSpec]result.IterSpec{
		{Count: 5, Time: time.Second}:           {Count: 1, Time: time.Second},
		{Count: 3, Time: 20 * time.Millisecond}: {Count: 1, Time: 20 * time.Millisecond},
		{Count: 3, Ops: 1000}:                   {Count: 1, Ops: 1000},
	} {
		if got := allocsWindow(m); got != want {
			t.Errorf("allocsWindow(%+v) = %+v, want %+v", m, got, want)
		}
	}
	if got := explainWarmup(result.IterSpec{Count: 3, Time: time.Second}); got != (result.IterSpec{Count: 1, Time: time.Second}) {
		t.Errorf("explainWarmup(3x1s) = %+v, want 1x1s", got)
	}
	if got := explainWarmup(result.IterSpec{}); got != (result.IterSpec{}) {
		t.Errorf("explainWarmup(none) = %+v, want none", got)
	}
	// A go test row's profiling forks are sized by the slower side.
	side := func(ns float64) *result.Run {
		return &result.Run{Cases: []*result.CaseResult{{Case: result.Case{Benchmark: "BenchmarkWork"}, Iterations: []result.Iteration{{Total: result.OpStats{NsPerOp: ns}}}}}}
	}
	if eo := explainEngine(Explaining{Runs: []*result.Run{side(100), side(400)}}); eo.NsPerOp["BenchmarkWork"] != 400 {
		t.Errorf("the profiling forks' speed %v, want the slower side's 400 ns/op", eo.NsPerOp)
	}
}

func TestParseExplain(t *testing.T) {
	for in, want := range map[string]Explain{"": ExplainChanged, "changed": ExplainChanged, "all": ExplainAll, "off": ExplainOff} {
		if got, err := ParseExplain(in); err != nil || got != want {
			t.Errorf("ParseExplain(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseExplain("yes"); err == nil {
		t.Error(`ParseExplain("yes"): no error`)
	}
	for _, n := range []int{1, 2, -1} {
		if CheckExplainRounds(n) == nil {
			t.Errorf("CheckExplainRounds(%d): no error", n)
		}
	}
	if CheckExplainRounds(0) != nil || CheckExplainRounds(3) != nil {
		t.Error("CheckExplainRounds refuses 0 (the default) or 3")
	}
}

// An explained row carries its report's notes beside its functions (or
// the reason none is named): a note on two toolchains must not stay in
// the text file only.
func TestExplainedRowCarriesItsNotes(t *testing.T) {
	note := "the sides' programs were built by different toolchains (baseline go1.25.3, experiment go1.26.8)"
	res := &Result{Out: "/out", Tables: &compare.Tables{}, Explained: []Explained{
		{Case: "BenchmarkGet", Dir: "/out/explain/Get", Report: &explain.Report{Notes: []string{note}}},
		{Case: "BenchmarkPut", Dir: "/out/explain/Put", Report: &explain.Report{}},
	}}
	var b bytes.Buffer
	res.explainedMarkdown(&b)
	var get, put string
	for _, line := range strings.Split(b.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "- Get: "):
			get = line
		case strings.HasPrefix(line, "- Put: "):
			put = line
		}
	}
	if !strings.Contains(get, "no function named") || !strings.Contains(get, "("+note+")") || !strings.HasSuffix(get, "; explain/Get") {
		t.Errorf("the Get row does not carry its note:\n%s", b.String())
	}
	if put == "" || strings.Contains(put, "toolchains") || strings.Contains(put, "()") {
		t.Errorf("the Put row, without notes: %q", put)
	}
}

// TestInstructionsNotExplainedSaysWhy: a side whose instructions fork
// failed (valgrind crashed on it) leaves the row explained by CPU and a
// note of why not by instructions; a run that counted no instructions
// adds nothing to the row.
func TestInstructionsNotExplainedSaysWhy(t *testing.T) {
	crashed := &result.ForkError{Message: "valgrind could not run the program: it does not decode RDTSCP"}
	run := func(pr result.ProfileRun) *result.Run {
		return &result.Run{Cases: []*result.CaseResult{{Case: result.Case{Benchmark: "BenchmarkGet"}, Profiles: []result.ProfileRun{pr}}}}
	}
	ok := result.ProfileRun{Kind: "instructions", Exe: "/nonexistent", Callgrind: []result.CallgrindFile{{Path: "/nonexistent", Ops: 1}}}
	bad := result.ProfileRun{Kind: "instructions", Err: crashed}
	r, err := explainInstructions(t.TempDir(), "BenchmarkGet", []*result.Run{run(bad), run(ok)}, [2]func(string) ([]byte, error){})
	if r != nil || err == nil || !strings.Contains(err.Error(), "baseline: the instructions fork failed: "+crashed.Error()) {
		t.Fatalf("a crashed baseline: %v, %v", r, err)
	}
	e := Explained{Case: "BenchmarkGet", Dir: "/out/explain/Get", Report: &explain.Report{}, InstructionsErr: err}
	res := &Result{Out: "/out", Tables: &compare.Tables{}, Explained: []Explained{e}}
	var b bytes.Buffer
	res.explainedMarkdown(&b)
	if !strings.Contains(b.String(), "no function named") || !strings.Contains(b.String(), "; instructions not explained: baseline: the instructions fork failed: "+crashed.Error()) {
		t.Errorf("the row:\n%s", b.String())
	}
	cpu := run(result.ProfileRun{Kind: "cpu"})
	if r, err := explainInstructions(t.TempDir(), "BenchmarkGet", []*result.Run{cpu, cpu}, [2]func(string) ([]byte, error){}); r != nil || err != nil {
		t.Errorf("no instructions counted: %v, %v; want nothing", r, err)
	}
}
