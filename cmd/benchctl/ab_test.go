package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
)

func init() {
	// The parent plans with its own registry; the tiny module's binaries
	// run the bodies.
	harness.Register(&harness.Benchmark{Family: "tiny", Name: "TinyWork", Setup: func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) { return func() {}, nil })
		return nil
	}})
}

const tinyMain = `package main

import (
	"os"

	"github.com/ledgerbench/ledgerbench/harness"
)

//go:noinline
func work(x uint64) uint64 {
	for i := 0; i < ROUNDS; i++ {
		x ^= x >> 29
		x *= 0xbf58476d1ce4e5b9
	}
	return x
}

func init() {
	harness.Register(&harness.Benchmark{Family: "tiny", Name: "TinyWork", Setup: func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) {
			x := uint64(3)
			return func() { x = work(x); w.Sink(x) }, nil
		})
		return nil
	}})
}

func main() {
	if harness.IsChild() {
		os.Exit(harness.ChildMain(harness.Default))
	}
}
`

// tinyRepo makes a git repository of a tiny module using this module's
// harness, with two commits: the second makes TinyWork 4× slower.
func tinyRepo(t *testing.T) (dir string, first, second string) {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(self)))
	dir = t.TempDir()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod := strings.Replace(string(gomod), "module github.com/ledgerbench/ledgerbench", "module tiny", 1)
	mod += "\nrequire github.com/ledgerbench/ledgerbench v0.0.0\n\nreplace github.com/ledgerbench/ledgerbench => " + root + "\n"
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644)
	os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
	os.MkdirAll(filepath.Join(dir, "cmd", "benchctl"), 0o755)
	gitT := func(args ...string) string {
		t.Helper()
		out, err := git(dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	write := func(rounds string) {
		os.WriteFile(filepath.Join(dir, "cmd", "benchctl", "main.go"), []byte(strings.Replace(tinyMain, "ROUNDS", rounds, 1)), 0o644)
	}
	gitT("init", "-q")
	write("64")
	gitT("add", ".")
	gitT("commit", "-q", "-m", "fast")
	first = gitT("rev-parse", "HEAD")
	write("256")
	gitT("commit", "-q", "-am", "slow")
	second = gitT("rev-parse", "HEAD")
	return dir, first, second
}

func abApp(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	var out, errb strings.Builder
	a := &app{registry: harness.Default, stdout: &out, stderr: &errb, dir: dir}
	code := a.main(t.Context(), args)
	return code, out.String(), errb.String()
}

func TestABFindsTheRegression(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two revisions")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, first, second := tinyRepo(t)
	out := filepath.Join(t.TempDir(), "ab")
	code, stdout, stderr := abApp(t, dir, "ab", "--base", first, "--head", second, "--bench", "^BenchmarkTinyWork$",
		"--forks", "3", "--warmup", "1x30ms", "--measure", "3x30ms", "--out", out)
	if code != 1 || !strings.Contains(stderr, "REGRESSION TinyWork sec/op") {
		t.Fatalf("exit %d, want 1 with the regression\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "| Benchmark | baseline ("+first[:12]+") | experiment ("+second[:12]+") | Change |") &&
		!strings.Contains(strings.Join(strings.Fields(stdout), " "), "| Benchmark | baseline ("+first[:12]+") | experiment ("+second[:12]+") | Change |") {
		t.Errorf("no PR table:\n%s", stdout)
	}
	txt, err := os.ReadFile(filepath.Join(out, "ab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"toolchain: baseline", "toolchain: experiment", "baseline-commit: " + first, "experiment-commit: " + second, "A/B fork order"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("ab.txt lacks %q", want)
		}
	}
	if strings.Contains(string(txt), "\ncommit: ") {
		t.Error("ab.txt has a per-side commit key: benchstat would split the sides into tables")
	}
	// Same code on both sides: no regression.
	code, _, stderr = abApp(t, dir, "ab", "--base", second, "--head", ".", "--bench", "^BenchmarkTinyWork$",
		"--forks", "2", "--warmup", "1x30ms", "--measure", "3x30ms", "--min-change", "20", "--out", filepath.Join(t.TempDir(), "same"))
	if code != 0 {
		t.Errorf("A/A run: exit %d\n%s", code, stderr)
	}
}

func TestABBadInput(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, first, _ := tinyRepo(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ab", "--base", "nosuchrev", "--bench", "TinyWork"}, `revision "nosuchrev" does not exist`},
		{[]string{"ab", "--base", "--upload-pack=x", "--bench", "TinyWork"}, "must not start with -"},
		{[]string{"ab", "--bench", "TinyWork"}, "--base is required"},
		{[]string{"ab", "--base", first, "--forks", "0", "--bench", "TinyWork"}, "ab needs forks"},
	} {
		code, _, stderr := abApp(t, dir, append(tc.args, "--out", filepath.Join(t.TempDir(), "o"))...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	os.WriteFile(filepath.Join(dir, "cmd", "benchctl", "main.go"), []byte("package main\nfunc main() {}\n"), 0o644)
	code, _, stderr := abApp(t, dir, "ab", "--base", first, "--head", "HEAD", "--bench", "TinyWork", "--out", filepath.Join(t.TempDir(), "o"))
	if code != 2 || !strings.Contains(stderr, "uncommitted changes") {
		t.Errorf("dirty HEAD: exit %d, stderr %q", code, stderr)
	}
}
