package benchctl

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/internal/bisect"
	"github.com/ledgerbench/ledgerbench/internal/histgen"
)

func init() {
	// The parent plans with its own registry; the generated history's
	// binaries run the bodies.
	// (No suite: the CLI tests list this binary's suites.)
	harness.Register(&harness.Benchmark{Family: "tiny", Name: "WorkLoop", Setup: func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) { return func() {}, nil })
		return nil
	}})
}

// historyRepo is a generated history of n commits after good whose
// commit culprit makes Work factor times slower; broken commits do not
// compile.
func historyRepo(t *testing.T, n, culprit int, factor float64, broken ...int) (dir string, commits []string) {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	dir = t.TempDir()
	commits, err := histgen.Write(dir, histgen.Spec{Commits: n, Changes: []histgen.Change{{At: culprit, Factor: factor}}, Broken: broken,
		Rounds: 64, Harness: filepath.Dir(filepath.Dir(self))})
	if err != nil {
		t.Fatal(err)
	}
	return dir, commits
}

// ownExplained checks that the culprit's own change is explained: Work's
// loop is all it changed.
func ownExplained(t *testing.T, r bisect.Report, out string) {
	t.Helper()
	if !strings.HasPrefix(r.Own.Functions, "tiny.Work +") || r.Own.Explain == "" {
		t.Errorf("the culprit's functions: %q (%s), in %q", r.Own.Functions, r.Own.Unexplained, r.Own.Explain)
	} else if _, err := os.Stat(filepath.Join(out, r.Own.Explain, "flame.svg")); err != nil {
		t.Error(err)
	}
}

func readBisect(t *testing.T, out string) bisect.Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "bisect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r bisect.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

var bisectTiming = []string{"--cmd", "./cmd/bench", "--bench", "^BenchmarkWorkLoop$", "--forks", "3", "--warmup", "1x20ms", "--measure", "3x20ms", "--budget", "20s", "--min-change", "10", "--explain", "off"}

// TestBisectFindsThePlantedCommit: a history of 8 commits after good, the
// sixth 4× slower, the fourth (the first probed) unbuildable; the culprit, its own
// table and functions, every step on disk; a second bisection builds
// nothing anew (and, --explain off, profiles nothing).
func TestBisectFindsThePlantedCommit(t *testing.T) {
	needGit(t)
	dir, c := historyRepo(t, 8, 6, 4, 4)
	cache := filepath.Join(t.TempDir(), "cache")
	out := filepath.Join(t.TempDir(), "bisect")
	args := append([]string{"bisect", "--good", c[0], "--bad", c[8], "--build-cache", cache, "--out", out}, bisectTiming...)
	// The last --explain value wins. 5 profiling rounds, not 3: under
	// the race suite's load 3 pairs (a t with 2 degrees of freedom) once
	// left tiny.Work unnamed though the row's CPU change was +339 ns/op
	// [+68, +610].
	args = append(args, "--explain", "changed", "--explain-rounds", "5")
	code, stdout, stderr := abApp(t, dir, args...)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	r := readBisect(t, out)
	if r.Culprit == nil || r.Culprit.Hash != c[6] || !strings.Contains(r.Culprit.Subject, "(×4)") {
		t.Fatalf("culprit %+v, want %s\n%s", r.Culprit, c[6], stderr)
	}
	if r.Total == nil || r.Total.Ratio < 2 || bisect.RowName(r.Benchmark) != "WorkLoop" || r.Unit != "sec/op" {
		t.Fatalf("whole change: %+v of %q %q", r.Total, r.Benchmark, r.Unit)
	}
	// The culprit is the whole change, so it explains all of it. Its own
	// A/B stops once its interval is within ±¼ of the whole change (in
	// logs), so the share's interval is about ±0.25 wide: a share off by
	// more than 0.5 is two such half-widths (CI's -race host once gave
	// 0.64 [0.43, 0.86] from 3 rounds, when the test asked for ±0.2).
	if own := r.Own; own == nil || own.Change == nil || own.Explains == nil || own.Parent.Hash != c[5] {
		t.Fatalf("its own change: %+v", r.Own)
	} else if e, want := own.Explains, math.Log(own.Change.Ratio)/math.Log(r.Total.Ratio); math.Abs(e.Share-want) > 1e-9 || e.Lo > e.Share || e.Hi < e.Share || e.Share < 0.5 || e.Share > 1.5 {
		t.Errorf("its own change %s explains %+v of the whole %s, want log(own)/log(whole) = %.3f, near 1", own.Change, *e, r.Total, want)
	}
	for _, want := range []string{"## Culprit: " + c[6][:12], "Functions behind it", "| parent (" + c[5][:12] + ") | culprit (" + c[6][:12] + ") |", "## Steps", "the ends"} {
		if !strings.Contains(strings.Join(strings.Fields(stdout), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("the report lacks %q:\n%s", want, stdout)
		}
	}
	ownExplained(t, r, out)
	// Every step says how far the search is: the commits that may hold
	// the change and the steps left, and from the second step their time.
	if !regexp.MustCompile(`step 1: commit \d+ of \d+, [0-9a-f]+ .*; \d+ commits may hold the change, about \d+ step\(s\) left with this one\n`).MatchString(stderr) ||
		!regexp.MustCompile(`step 2: .*; \d+ commits may hold the change, about \d+ step\(s\) left with this one \([0-9hms.]+ a step so far: about [0-9hms.]+\)\n`).MatchString(stderr) {
		t.Errorf("the steps do not say how far the search is:\n%s", stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "bisect.md"))
	if err != nil || string(md) != stdout {
		t.Errorf("bisect.md is not what was printed (%v)", err)
	}
	if len(r.Steps) > r.Log2+1 || r.Steps[0].Verdict != bisect.Skipped {
		t.Errorf("%d steps for %d commits (one unbuildable): %+v", len(r.Steps), r.Commits, r.Steps)
	}
	for _, s := range r.Steps {
		want := bisect.Good
		switch {
		case s.Commit.Hash == c[4]:
			want = bisect.Skipped
		case s.Index+1 >= 6:
			want = bisect.Bad
		}
		if s.Verdict != want {
			t.Errorf("step of %s (commit %d): %s, want %s (%s)", s.Commit.Hash[:12], s.Index+1, s.Verdict, want, s.Reason)
		}
		if s.Verdict != bisect.Skipped {
			if _, err := os.Stat(filepath.Join(out, s.Dir, "ab.txt")); err != nil {
				t.Errorf("step %s: %v", s.Commit.Hash[:12], err)
			}
		} else if !strings.Contains(s.Reason, "does not build") {
			t.Errorf("skipped step's reason: %q", s.Reason)
		}
	}
	want := len(r.Steps) + 2 // the confirmation and the culprit's own
	if r.Refined != nil {
		want++
	}
	if r.ABRuns != want {
		t.Errorf("%d A/B runs for %d steps", r.ABRuns, len(r.Steps))
	}
	// No worktree is left behind.
	if wt, _ := git(dir, "worktree", "list"); strings.Count(wt, "\n") > 0 {
		t.Errorf("worktrees left:\n%s", wt)
	}
	t.Logf("%s", stdout)
	// Again: every build comes from the cache.
	again := filepath.Join(t.TempDir(), "again")
	code, _, stderr = abApp(t, dir, append([]string{"bisect", "--good", c[0], "--bad", c[8], "--build-cache", cache, "--out", again}, bisectTiming...)...)
	if code != 0 || strings.Contains(stderr, "building experiment") || !strings.Contains(stderr, "built before") {
		t.Errorf("second bisection: exit %d, rebuilt what was cached:\n%s", code, stderr)
	}
	if r := readBisect(t, again); r.Own == nil || r.Own.Explain != "" || r.Own.Functions != "" {
		t.Errorf("--explain off: the culprit was explained: %+v", r.Own)
	}
}

// TestBisectEnds: no change between the ends, reversed ends, and bad
// input.
func TestBisectEnds(t *testing.T) {
	needGit(t)
	dir, c := historyRepo(t, 2, 2, 4)
	cache := filepath.Join(t.TempDir(), "cache")
	run := func(args ...string) (int, string, string) {
		return abApp(t, dir, append(append([]string{"bisect", "--build-cache", cache, "--out", filepath.Join(t.TempDir(), "b")}, bisectTiming...), args...)...)
	}
	code, stdout, stderr := run("--good", c[0], "--bad", c[1], "--min-change", "20")
	if code != 1 || !strings.Contains(stderr, "no change between these revisions") || !strings.Contains(stdout, "## No culprit") {
		t.Errorf("no change: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = run("--good", c[1], "--bad", c[2], "--direction", "better")
	if code != 1 || !strings.Contains(stderr, "reversed") || !strings.Contains(stderr, "--direction worse") {
		t.Errorf("reversed: exit %d\n%s", code, stderr)
	}
	for _, bad := range [][]string{
		{"--good", c[2], "--bad", c[0]},        // not an ancestor
		{"--good", c[1], "--bad", c[1]},        // no range
		{"--good", "nosuchref", "--bad", c[1]}, // unknown ref
		{"--good", c[0]},                       // no bad
		{"--good", c[0], "--bad", "."},         // the working tree
		{"--good", c[0], "--bad", c[1], "--direction", "sideways"},
		{"--good", c[0], "--bad", c[1], "--metric", "furlongs/op"},
		{"--good", c[0], "--bad", c[1], "--bench", "^BenchmarkNoSuch$"}, // matches nothing at either end
	} {
		code, _, stderr := run(bad...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", bad, code, stderr)
		}
		t.Logf("%v: %s", bad, strings.TrimSpace(stderr))
	}
}

// TestBisectOfGoTestBenchmarks: the same search over a package's
// testing.B benchmark, which first appears after good (the good end is
// measured with the bad end's test files overlaid); the culprit is
// explained by its functions.
func TestBisectOfGoTestBenchmarks(t *testing.T) {
	needGit(t)
	gobench(t)
	dir := t.TempDir()
	write, gitT := repoTools(t, dir)
	work := "package work\n\n// Work spins.\nfunc Work(x uint64) uint64 {\n\tfor i := 0; i < ROUNDS; i++ {\n\t\tx = x*6364136223846793005 + 1442695040888963407\n\t}\n\treturn x\n}\n"
	gitT("init", "-q")
	write("go.mod", "module example.com/bisectgo\n\ngo 1.24\n")
	write("work/work.go", strings.Replace(work, "ROUNDS", "64", 1))
	write("work/other_test.go", "package work\n\nimport \"testing\"\n\nfunc BenchmarkOther(b *testing.B) {\n\tfor b.Loop() {\n\t}\n}\n")
	gitT("add", ".")
	gitT("commit", "-q", "-m", "work, without its benchmark")
	var c []string
	c = append(c, gitT("rev-parse", "HEAD"))
	for i, step := range []string{"benchmark", "note", "slower", "note"} {
		switch step {
		case "benchmark":
			write("work/work_test.go", "package work\n\nimport \"testing\"\n\nvar sink uint64\n\nfunc BenchmarkWork(b *testing.B) {\n\tfor b.Loop() {\n\t\tsink = Work(sink)\n\t}\n}\n")
		case "slower":
			write("work/work.go", strings.Replace(work, "ROUNDS", "256", 1))
		default:
			write("notes.txt", fmt.Sprint(i))
		}
		gitT("add", ".")
		gitT("commit", "-q", "-m", step)
		c = append(c, gitT("rev-parse", "HEAD"))
	}
	out := filepath.Join(t.TempDir(), "bisect")
	code, stdout, stderr := abApp(t, dir, "bisect", "--good", c[0], "--bad", c[4], "./work", "--bench", "^BenchmarkWork$", "--forks", "3", "--warmup", "1x20ms", "--measure", "2x30ms",
		"--budget", "20s", "--min-change", "10", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	r := readBisect(t, out)
	if r.Culprit == nil || r.Culprit.Hash != c[3] || r.Own == nil || r.Own.Explains == nil {
		t.Fatalf("culprit %+v (%+v), want %s\n%s", r.Culprit, r.Own, c[3], stdout)
	}
	if !strings.Contains(stderr, "overlaid") {
		t.Errorf("the good end, before the benchmark, was not overlaid:\n%s", stderr)
	}
	// The culprit's go test row is explained by its CPU profiles (their
	// forks sized by its measured speed, not one op each).
	if !strings.Contains(r.Own.Functions, "work.Work +") {
		t.Errorf("the culprit's functions: %q (%s)", r.Own.Functions, r.Own.Unexplained)
	}
}

// cancelOn is a writer that cancels when what is written contains a
// marker.
type cancelOn struct {
	strings.Builder
	marker string
	cancel func()
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.Builder.Write(p)
	if strings.Contains(c.String(), c.marker) {
		c.cancel()
	}
	return n, err
}

// TestInterruptedBisectKeepsItsSteps: an interrupt during the first step
// ends the bisection with exit 1, the report saying where it stopped, the
// confirmation's raw A/B kept, and no worktree left behind.
func TestInterruptedBisectKeepsItsSteps(t *testing.T) {
	needGit(t)
	dir, c := historyRepo(t, 4, 3, 4)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	out := filepath.Join(t.TempDir(), "bisect")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stderr := &cancelOn{marker: "step 1: ", cancel: cancel}
	var stdout strings.Builder
	a := &app{name: "bench", registry: harness.Default, stdout: &stdout, stderr: stderr, dir: dir}
	code := a.main(ctx, append([]string{"bisect", "--good", c[0], "--bad", c[4], "--build-cache", "off", "--out", out}, bisectTiming...))
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
	}
	r := readBisect(t, out)
	if r.Culprit != nil || r.Stopped == "" || !strings.Contains(r.Stopped, "interrupted") || r.Confirm == nil || r.Total == nil {
		t.Errorf("report of an interrupted bisection: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(out, r.Confirm.File)); err != nil || r.Confirm.File == "" {
		t.Errorf("the confirmation's A/B: %q %v", r.Confirm.File, err)
	}
	if !strings.Contains(stdout.String(), "## Stopped after") {
		t.Errorf("the report does not say where it stopped:\n%s", stdout.String())
	}
	if wt, _ := git(dir, "worktree", "list"); strings.Count(wt, "\n") > 0 {
		t.Errorf("worktrees left:\n%s", wt)
	}
}

// TestTwoBisectionsAtOnceOnOneHost: the second waits for the run lock,
// and without --wait-lock fails at once, building nothing.
func TestTwoBisectionsAtOnceOnOneHost(t *testing.T) {
	needGit(t)
	dir, c := historyRepo(t, 2, 2, 4)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	lock := filepath.Join(t.TempDir(), "run.lock")
	release, err := hostcheck.Lock(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var stdout, stderr strings.Builder
	a := &app{name: "bench", registry: harness.Default, stdout: &stdout, stderr: &stderr, dir: dir}
	code := a.main(t.Context(), append([]string{"bisect", "--good", c[0], "--bad", c[2], "--lock", lock, "--out", filepath.Join(t.TempDir(), "b")}, bisectTiming...))
	if code != 1 || !strings.Contains(stderr.String(), "lock") || strings.Contains(stderr.String(), "building") {
		t.Errorf("exit %d, want 1 at the lock before any build\n%s", code, stderr.String())
	}
}

// TestBisectClaimsOnlyAConfirmedCulprit: two slowdowns, ×1.35 at commit
// 1 and ×1.7 at commit 3, and a --min-change of 95 %: the ends differ by
// +130 %, a change; the search ends at commit 3 (it carries 64 % of the
// change, commits 1 and 2 carry 36 %), whose own change against its
// parent, +70 %, is not one at that margin. No culprit is claimed: exit
// 1, commit 3 named as where the search ended. Either side survives an
// estimate 15 % off (with ×1.25, ×1.75 and 90 %, the own change once
// measured +93 % [+69, +121] under the -race run's load: 8.6 % off).
func TestBisectClaimsOnlyAConfirmedCulprit(t *testing.T) {
	if raceEnabled {
		// Under the race suite's load commit 2's share of the change
		// (36 %) was once measured 40 % [29, 51]: undecided against one
		// half, and no candidate reached.
		t.Skip("its verdicts need quiet forks: .ci/run runs this test in a normal build")
	}
	needGit(t)
	_, self, _, _ := runtime.Caller(0)
	dir := t.TempDir()
	c, err := histgen.Write(dir, histgen.Spec{Commits: 3, Changes: []histgen.Change{{At: 1, Factor: 1.35}, {At: 3, Factor: 1.7}},
		Rounds: 128, Harness: filepath.Dir(filepath.Dir(self))})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bisect")
	args := append([]string{"bisect", "--good", c[0], "--bad", c[3], "--build-cache", filepath.Join(t.TempDir(), "cache"), "--out", out}, bisectTiming...)
	// A step's budget of 60 s, not 20: under the -race suite's load the
	// steps once stayed unknown within 20 s and no candidate was reached.
	code, stdout, stderr := abApp(t, dir, append(args, "--min-change", "95", "--budget", "60s")...)
	if _, err := os.Stat(filepath.Join(out, "bisect.json")); err != nil {
		t.Fatalf("exit %d, no report\n%s\n%s", code, stdout, stderr)
	}
	r := readBisect(t, out)
	if code != 1 || r.Culprit != nil || r.Candidate == nil || r.Candidate.Hash != c[3] {
		t.Fatalf("exit %d, culprit %+v, candidate %+v; want 1, none, %s\n%s\n%s", code, r.Culprit, r.Candidate, c[3][:12], stdout, stderr)
	}
	if r.Own == nil || r.Own.Change == nil || r.Own.Verdict == "changed" || !strings.Contains(stderr, "no culprit claimed") ||
		!strings.Contains(stdout, "## No culprit claimed") {
		t.Errorf("the report of an unclaimed candidate: own %+v\n%s\n%s", r.Own, stdout, stderr)
	}
	if r.Confirm == nil || r.Confirm.Verdict != "changed" || r.Confirm.Change == nil {
		t.Errorf("the ends' step lacks its verdict: %+v", r.Confirm)
	}
}

// TestBisectRefusesAnEarlierOut: an --out holding an interrupted
// bisection's steps (no report yet) is refused, as ab refuses an --out
// with results, before anything is built.
func TestBisectRefusesAnEarlierOut(t *testing.T) {
	needGit(t)
	dir, c := historyRepo(t, 2, 2, 4)
	out := filepath.Join(t.TempDir(), "b")
	if err := os.MkdirAll(filepath.Join(out, "steps", "00-confirm"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := abApp(t, dir, append([]string{"bisect", "--good", c[0], "--bad", c[2], "--out", out}, bisectTiming...)...)
	if code != 2 || !strings.Contains(stderr, "holds the results of an earlier run (steps/)") || strings.Contains(stderr, "building") {
		t.Errorf("exit %d, want 2 refusing the --out\n%s", code, stderr)
	}
}
