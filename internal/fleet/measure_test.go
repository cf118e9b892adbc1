package fleet

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// abRegistry is the benchmark program this test binary is when forked:
// a loop of n additions at two sizes.
var abRegistry = &harness.Registry{}

func init() {
	abRegistry.Register(&harness.Benchmark{Family: "fleet", Name: "Sum",
		Params: []harness.Param{{Name: "n", Values: []string{"100", "1000"}, Kind: harness.Int}},
		Setup: func(t *harness.Trial) error {
			n := t.Int("n")
			var sink int
			t.Run(func(w *harness.Worker) (func(), error) {
				return func() {
					for i := range n {
						sink += i
					}
				}, nil
			})
			return nil
		}})
}

// testEnv is a session environment that says what it does into the
// test's log.
func testEnv(t *testing.T) *session.Env {
	exe, _ := os.Executable()
	return &session.Env{Name: "fleet-test", Executable: exe, Stderr: testWriter{t}}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// startMachine starts an agent that measures on this machine.
func startMachine(t *testing.T, pool *pgxpool.Pool, class, name string) {
	t.Helper()
	eo := engine.DefaultOptions()
	s, err := session.Prepare(t.Context(), testEnv(t), session.HostOptions{IgnoreLock: true}, &eo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Release)
	m := &Machine{Pool: pool, Session: s, Dir: t.TempDir(), Name: name}
	started(t, &Agent{Pool: pool, Class: class, Name: name, Measure: m.Measure})
}

// TestTwoAgentsMeasureAnAB: an A/B of two copies of this test binary,
// spread over two agents of one class as jobs of one round of some
// cases. Every round of every case is measured once, on one agent; each
// agent's jobs are one file, a stratum; every row is decided from its
// pairs, and ab.txt holds the agents' files one after another. Started
// again with the same arguments, the comparison takes its jobs back and
// measures nothing.
func TestTwoAgentsMeasureAnAB(t *testing.T) {
	pool := fleetDB(t)
	startMachine(t, pool, "ab", "agent-1")
	startMachine(t, pool, "ab", "agent-2")
	exe, _ := os.Executable()
	dir := t.TempDir()
	var sides []engine.Side
	for _, name := range []string{"baseline", "experiment"} {
		data, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		sides = append(sides, engine.Side{Name: name, Launch: engine.Program{Executable: p}})
	}
	eo := engine.DefaultOptions()
	eo.Forks = 6
	eo.Warmup = result.IterSpec{Count: 1, Time: 5 * time.Millisecond}
	eo.Measure = result.IterSpec{Count: 2, Time: 5 * time.Millisecond}
	cases, err := eo.Plan(abRegistry)
	if err != nil {
		t.Fatal(err)
	}
	env := testEnv(t)
	s, err := session.Prepare(t.Context(), env, session.HostOptions{IgnoreLock: true}, &eo)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	// A job time of one and a half rounds of one case: each case's 6
	// rounds cut into two jobs of 3 (MinJobRounds), 4 jobs.
	one := eo
	one.Forks = 1
	remote := &Remote{Pool: pool, Class: "ab", JobTime: engine.FirstRounds(one, 1) * 3 / 2, Poll: 50 * time.Millisecond}
	o := ab.Options{Base: "a", Head: "b", Engine: eo, Alpha: 0.05, MinChange: 1, Remote: remote, Out: filepath.Join(dir, "out")}
	set := &ab.Sides{Sides: sides, Cases: cases}
	res, err := ab.Compare(t.Context(), s, o, set, dir)
	if keep := os.Getenv("FLEET_TEST_KEEP"); keep != "" {
		os.CopyFS(keep, os.DirFS(o.Out))
	}
	if err != nil && res == nil {
		t.Fatal(err)
	}
	machines, _ := filepath.Glob(filepath.Join(o.Out, "ab-machines", "*.txt"))
	if len(machines) != 2 {
		t.Fatalf("files by machine %v, want one of each agent", machines)
	}
	var all []byte
	for _, p := range machines {
		data, _ := os.ReadFile(p)
		all = append(all, data...)
		agent := strings.TrimSuffix(filepath.Base(p), ".txt")
		if n := bytes.Count(data, []byte(", attempt 1, agent "+agent+"\n")); n == 0 {
			t.Errorf("%s holds no job's run labelled with its agent", p)
		}
	}
	txt, _ := os.ReadFile(filepath.Join(o.Out, "ab.txt"))
	if len(txt) != len(all) {
		t.Errorf("ab.txt has %d bytes, the machines' files %d", len(txt), len(all))
	}
	for _, c := range cases {
		for _, side := range []string{"baseline", "experiment"} {
			// 6 rounds of 2 measured iterations, each a result line.
			if n := countResults(txt, side, c.Name()); n != 12 {
				t.Errorf("%s of %s: %d result lines, want 12 (6 rounds of 2)", c.Name(), side, n)
			}
		}
		// Each agent that measured a case is a stratum of at least 3
		// pairs: none is left out for want of a variance.
		ds := res.Tables.CaseDecisions(c.Name())
		if len(ds) == 0 {
			t.Errorf("%s: no decision", c.Name())
			continue
		}
		if d := ds[0]; d.Change.N != 6 || (d.Hosts != nil && len(d.Hosts.Skipped) > 0) {
			t.Errorf("%s: %+v (hosts %+v), want 6 pairs and no stratum left out", c.Name(), d, d.Hosts)
		}
	}
	// Started again: the same 4 jobs, taken back, nothing measured.
	again, err := remote.plan(t.Context(), ab.Rounds{Engine: eo, Cases: cases, Sides: sides})
	if err != nil || len(again) != 4 {
		t.Fatalf("plan again: %d jobs, %v", len(again), err)
	}
	c, _ := NewCoordinator(pool)
	e, err := c.Enqueue(t.Context(), again)
	if err != nil || e.Resumed != 4 {
		t.Errorf("enqueued again: %d of 4 taken back (%v)", e.Resumed, err)
	}
}

// countResults counts the result lines of a case under a side's
// toolchain key in a results file.
func countResults(data []byte, side, name string) int {
	n, in := 0, ""
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "toolchain: "); ok {
			in = strings.TrimSpace(v)
		}
		if rest, ok := strings.CutPrefix(line, name); ok && in == side && regexp.MustCompile(`^(-[0-9]+)?\s`).MatchString(rest) {
			n++
		}
	}
	return n
}

// TestAProgramThatDoesNotHashIsRefused: a job whose program's bytes in
// the database no longer hash to the job's hash (tampered with, or
// damaged) is failed at once with the reason, not retried on every
// agent, and its cases are named.
func TestAProgramThatDoesNotHashIsRefused(t *testing.T) {
	pool := fleetDB(t)
	exe, _ := os.Executable()
	hash, err := Publish(t.Context(), pool, exe)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `UPDATE benchctl_fleet_artifact SET bytes = 'not the program' WHERE sha256 = $1`, hash); err != nil {
		t.Fatal(err)
	}
	startMachine(t, pool, "tamper", "agent-t")
	js := jobs("tampered", "tamper", 1)
	js[0].Sides = []Artifact{{Side: "baseline", SHA256: hash}}
	js[0].Spec = []byte(`{"cases":[{"case":{"Benchmark":"BenchmarkSum","ID":"fleet/Sum"}}]}`)
	c, _ := NewCoordinator(pool)
	e, err := c.Enqueue(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err = c.Wait(ctx, e, 50*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "bytes hash to") || !strings.Contains(err.Error(), "on 1 attempt(s)") || !strings.Contains(err.Error(), js[0].Cases[0]) {
		t.Errorf("a tampered program: %v; want the job failed on its first attempt, saying why and naming its case", err)
	}
}

// TestNoAgentOfTheClassIsSaid: a comparison whose class has no agent
// says so after Absent instead of waiting, and its jobs stay queued.
func TestNoAgentOfTheClassIsSaid(t *testing.T) {
	pool := fleetDB(t)
	startMachine(t, pool, "other", "agent-o") // of another class: no help
	exe, _ := os.Executable()
	eo := engine.DefaultOptions()
	eo.Forks = 1
	cases, _ := eo.Plan(abRegistry)
	remote := &Remote{Pool: pool, Class: "nobody", Poll: 50 * time.Millisecond, Absent: time.Second}
	start := time.Now()
	_, err := remote.Measure(t.Context(), testEnv(t), ab.Rounds{Engine: eo, Cases: cases, Dir: t.TempDir(),
		Sides: []engine.Side{{Name: "baseline", Launch: engine.Program{Executable: exe}}, {Name: "experiment", Launch: engine.Program{Executable: exe}}}})
	if err == nil || !strings.Contains(err.Error(), "no agent of class nobody") {
		t.Fatalf("no agent: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("said after %s, want about Absent (1 s)", d)
	}
}
