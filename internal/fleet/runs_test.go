package fleet

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// jobRun is a job's run JSON: forks 1 to forks of each case, each fork
// one measured iteration.
func jobRun(t *testing.T, start time.Time, forks int, cases ...string) []byte {
	t.Helper()
	run := &result.Run{Config: result.Config{Forks: forks, CPUs: []int{1}}, Start: start, End: start.Add(time.Minute), Order: []string{"1:x:a"}}
	for _, name := range cases {
		c := &result.CaseResult{Case: result.Case{Benchmark: name}, Mode: result.AverageTime}
		for f := 1; f <= forks; f++ {
			c.Iterations = append(c.Iterations, result.Iteration{Fork: f})
			c.Startup = append(c.Startup, time.Duration(f))
		}
		c.Failures = []*result.ForkError{{Benchmark: name, Fork: forks}}
		run.Cases = append(run.Cases, c)
	}
	data, err := json.Marshal([]*result.Run{run})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestMergeRunsRenumbersForks: a case's rounds cut over two jobs (rounds
// 1–3 and 4–6) are one case of six forks, numbered by round, its
// failures renumbered too; a case of the second job alone keeps its
// rounds' numbers; the run spans both jobs, with no one agent's CPUs or
// order of forks. A job whose agent kept no runs makes none.
func TestMergeRunsRenumbersForks(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	jobs := []Rounds{{First: 1, Count: 3}, {First: 4, Count: 3}}
	results := []Result{{JobID: 1, Runs: jobRun(t, t0.Add(time.Minute), 3, "BenchmarkA")}, {JobID: 2, Runs: jobRun(t, t0, 3, "BenchmarkA", "BenchmarkB")}}
	runs, err := mergeRuns(jobs, results)
	if err != nil || len(runs) != 1 {
		t.Fatalf("mergeRuns: %d runs, %v", len(runs), err)
	}
	run := runs[0]
	if run.Config.Forks != 6 || run.Config.CPUs != nil || run.Order != nil || !run.Start.Equal(t0) || !run.End.Equal(t0.Add(2*time.Minute)) || len(run.Cases) != 2 {
		t.Fatalf("the merged run: %+v", run)
	}
	forks := func(c *result.CaseResult) []int {
		var out []int
		for _, it := range c.Iterations {
			out = append(out, it.Fork)
		}
		return out
	}
	a, b := run.Cases[0], run.Cases[1]
	if got := forks(a); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6}) || len(a.Startup) != 6 || len(a.Failures) != 2 || a.Failures[0].Fork != 3 || a.Failures[1].Fork != 6 {
		t.Errorf("BenchmarkA: forks %v, %d startups, failures %+v %+v", got, len(a.Startup), a.Failures[0], a.Failures[1])
	}
	if got := forks(b); b.Case.Benchmark != "BenchmarkB" || !slices.Equal(got, []int{4, 5, 6}) {
		t.Errorf("BenchmarkB: %s, forks %v", b.Case.Benchmark, got)
	}
	if len(run.Cases[0].ForkScores()) == 0 {
		t.Errorf("no fork scores: %+v", run.Cases[0])
	}
	results[1].Runs = nil
	if runs, err := mergeRuns(jobs, results); err != nil || runs != nil {
		t.Errorf("a job without runs: %v, %v; want none", runs, err)
	}
}
