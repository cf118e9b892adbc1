package tinyrepo

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// tinyWork is the tiny module's code under test, in its own package.
const tinyWork = `package tiny

//go:noinline
func Work(x uint64) uint64 {
	for i := 0; i < ROUNDS; i++ {
		x ^= x >> 29
		x *= 0xbf58476d1ce4e5b9
	}
	return x
}
`

// tinyBench declares the tiny module's benchmark.
const tinyBench = `package bench

import (
	"tiny"

	"github.com/ledgerbench/ledgerbench/harness"
)

func init() {
	harness.Register(&harness.Benchmark{Family: "tiny", Name: "TinyWork", Setup: func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) {
			x := uint64(3)
			return func() { x = tiny.Work(x); w.Sink(x) }, nil
		})
		return nil
	}})
}
`

// tinyMain is the tiny module's benchmark program.
const tinyMain = `package main

import (
	"os"

	"github.com/ledgerbench/ledgerbench/benchctl"
	_ "tiny/bench"
)

func main() { os.Exit(benchctl.Main()) }
`

// Make makes a git repository of a tiny module that uses this
// module's harness. Its first commit predates the benchmark program (no
// cmd/bench, no bench package, a go.mod that does not require the
// harness); the second adds them; the third makes Work 4× slower.
func Make(t testing.TB) (dir string, commits [3]string) {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(self)))
	dir = t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	write, gitT := Tools(t, dir)
	gitT("init", "-q")
	write("go.mod", "module tiny\n\ngo 1.26.0\n")
	write("work.go", strings.Replace(tinyWork, "ROUNDS", "64", 1))
	gitT("add", ".")
	gitT("commit", "-q", "-m", "the code, before benchmarks")
	commits[0] = gitT("rev-parse", "HEAD")
	// The harness's requirements, then the harness itself from this tree.
	mod := strings.Replace(string(gomod), "module github.com/ledgerbench/ledgerbench", "module tiny", 1)
	mod += "\nrequire github.com/ledgerbench/ledgerbench v0.0.0\n\nreplace github.com/ledgerbench/ledgerbench => " + root + "\n"
	write("go.mod", mod)
	write("go.sum", string(sum))
	write("bench/bench.go", tinyBench)
	write("cmd/bench/main.go", tinyMain)
	gitT("add", ".")
	gitT("commit", "-q", "-m", "benchmarks")
	commits[1] = gitT("rev-parse", "HEAD")
	write("work.go", strings.Replace(tinyWork, "ROUNDS", "256", 1))
	gitT("commit", "-q", "-am", "slow")
	commits[2] = gitT("rev-parse", "HEAD")
	return dir, commits
}

// Tools returns, for a test's repository in dir, a function that
// writes a file of it and one that runs git in it as a test committer.
func Tools(t testing.TB, dir string) (write func(name, text string), gitT func(args ...string) string) {
	write = func(name, text string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitT = func(args ...string) string {
		t.Helper()
		out, err := revision.Git(dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	return write, gitT
}
