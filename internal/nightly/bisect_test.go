package nightly

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/histgen"
	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
	"github.com/ledgerbench/ledgerbench/internal/store"
)

func init() {
	// The parent plans with its own registry; the generated history's
	// binaries run the bodies.
	harness.Register(&harness.Benchmark{Family: "tiny", Name: "WorkLoop", Setup: func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) { return func() {}, nil })
		return nil
	}})
}

// historyRepo is a generated history of n commits after good whose
// commit culprit makes Work factor times slower.
func historyRepo(t *testing.T, n, culprit int, factor float64) (dir string, commits []string) {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	dir = t.TempDir()
	commits, err := histgen.Write(dir, histgen.Spec{Commits: n, Changes: []histgen.Change{{At: culprit, Factor: factor}},
		Rounds: 64, Harness: filepath.Dir(filepath.Dir(filepath.Dir(self)))})
	if err != nil {
		t.Fatal(err)
	}
	return dir, commits
}

// alarm is a night with a new regression of a generated history's
// benchmark, 4 commits whose third makes it four times slower.
type alarm struct {
	n       *night
	s       *session.Session
	c       []string
	results string
	regs    []history.Regression
	m       *history.MachineReport
	stderr  *strings.Builder
	written *[]string
}

func newAlarm(t *testing.T) *alarm {
	t.Helper()
	dir, c := historyRepo(t, 4, 3, 4)
	a := &alarm{c: c, results: t.TempDir(), stderr: &strings.Builder{}, written: new([]string)}
	env := &session.Env{Name: "bench", Stderr: a.stderr, Wrote: func(p string) { *a.written = append(*a.written, p) }}
	o := engine.ABOptions()
	o.Bench, o.Forks = "^BenchmarkWorkLoop$", 3
	o.Warmup, o.Measure = result.IterSpec{Count: 1, Time: 20 * time.Millisecond}, result.IterSpec{Count: 3, Time: 20 * time.Millisecond}
	cases, err := o.Plan(harness.Default)
	if err != nil {
		t.Fatal(err)
	}
	if a.s, err = session.Prepare(t.Context(), env, session.HostOptions{Lock: filepath.Join(t.TempDir(), "lock")}, &o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.s.Release)
	repo, err := revision.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The night's program cache is the test's own.
	a.n = &night{o: Options{Results: a.results, Program: "./cmd/bench", Cases: cases, Dir: dir, BisectBudget: time.Hour, StepBudget: 20 * time.Second,
		BuildCache: t.TempDir()},
		eo: o, env: env, repo: repo, machine: "m1"}
	ser := &history.Series{Benchmark: "BenchmarkWorkLoop-2", Unit: "sec/op", Points: []history.Point{{Commit: c[0]}, {Commit: c[4]}}}
	a.m = &history.MachineReport{MachineID: "m1", Series: []*history.Series{ser}, Shifts: map[*history.Series][]history.Shift{ser: {{Index: 1, Worse: true, New: true}}}}
	a.regs = a.m.NewRegressions()
	if len(a.regs) != 1 || a.regs[0].Good != c[0] || a.regs[0].Bad != c[4] {
		t.Fatalf("regressions %+v", a.regs)
	}
	a.m.Bisected = func(r history.Regression) string { return BisectedLine(a.results, "m1", r) }
	a.m.Explained = func(r history.Regression) string { return ExplainedLine(a.results, "m1", r) }
	a.m.BisectCommand = func(r history.Regression) string { return BisectCommand("bench", r, nil) }
	return a
}

// TestNightlyBisectsANewRegression: the loop from a nightly alarm to its
// commit: a new regression of the history's benchmark is bisected into
// DIR/bisect/<machine>/, the README line names the culprit and the
// function its change is in instead of the command, and a later night
// does not bisect it again.
func TestNightlyBisectsANewRegression(t *testing.T) {
	if testing.Short() {
		t.Skip("builds revisions")
	}
	a := newAlarm(t)
	n, s, c, regs, m, stderr := a.n, a.s, a.c, a.regs, a.m, a.stderr
	found := n.bisectNew(t.Context(), s, regs)
	written := *a.written
	lines := m.Regressions()
	if len(lines) != 1 || !strings.Contains(lines[0], "culprit `"+c[3][:12]+"`") || !strings.Contains(lines[0], "bisect report](bisect/m1/") || strings.Contains(lines[0], "bisect it") ||
		!strings.Contains(lines[0], "; in tiny.Work +") {
		t.Fatalf("README line %q\n%s", lines, stderr.String())
	}
	// What --server uploads of it is its server file alone, which a
	// store records as the regression's bisection, not as a run; its A/B
	// files are not told as written.
	if len(found) != 1 || filepath.Base(found[0]) != "bisect.txt" || len(written) != 0 {
		t.Fatalf("uploads after the bisection: %v (written %v), want its bisect.txt alone", found, written)
	}
	data, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Put(t.Context(), []payload.File{{Name: "bisect.txt", Data: data}}, "ci"); err != nil {
		t.Fatal(err)
	}
	machine := regexp.MustCompile(`(?m)^machine-id: (\S+)$`).FindSubmatch(data)
	if machine == nil {
		t.Fatalf("no machine-id in the bisection's file:\n%s", data)
	}
	bs, err := st.Bisections(t.Context(), string(machine[1]))
	if err != nil || len(bs) != 1 || bs[0].Culprit != c[3] || bs[0].Good != c[0] || bs[0].Bad != c[4] || bs[0].Benchmark != "BenchmarkWorkLoop-2" || bs[0].Own == "" || math.IsNaN(bs[0].Share) ||
		!strings.HasPrefix(bs[0].Functions, "tiny.Work +") {
		t.Errorf("the stored bisection: %+v, %v", bs, err)
	}
	if ms, _ := st.Machines(t.Context()); len(ms) != 0 {
		t.Errorf("the bisection counted as a run: %+v", ms)
	}
	before := stderr.Len()
	n.bisectNew(t.Context(), s, regs)
	if strings.Contains(stderr.String()[before:], "--bisect: ") {
		t.Errorf("bisected again:\n%s", stderr.String()[before:])
	}
}
