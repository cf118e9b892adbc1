package benchctl

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/servecmd"
)

// Fault helpers of the CLI: the test binary run as benchctl in a process
// of its own, optionally under a file-size limit (RLIMIT_FSIZE: a write
// past it fails with EFBIG, as a write to a full disk fails), and the
// app run concurrently with a fixed clock.

// cliMain is the test binary acting as benchctl (BENCHCTL_TEST_CLI set),
// with files limited to BENCHCTL_TEST_FSIZE bytes when that is set.
func cliMain() int {
	if n, err := strconv.ParseUint(os.Getenv("BENCHCTL_TEST_FSIZE"), 10, 64); err == nil {
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			return 99
		}
	}
	return Config{Name: "benchctl", Commands: servecmd.Commands}.Main()
}

// cli runs the test binary as benchctl with args; fsize > 0 limits the
// size of every file it (and its forks) writes.
func cli(t *testing.T, fsize int64, args ...string) (int, string, string) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "BENCHCTL_TEST_CLI=1", "XDG_RUNTIME_DIR="+t.TempDir())
	if fsize > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("BENCHCTL_TEST_FSIZE=%d", fsize))
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

var quickNoop = []string{"run", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--forks", "1", "--warmup", "0", "--measure", "3x10ms"}

// TestRunOnAFullDisk: when bench.json does not fit, the table is printed,
// bench.txt is kept alone (never beside a partial bench.json) and the exit
// is 1; when nothing fits, the table is still printed. (The run used to
// print nothing and leave a new bench.txt beside an old bench.json.)
func TestRunOnAFullDisk(t *testing.T) {
	probe := filepath.Join(t.TempDir(), "probe")
	if code, _, stderr := cli(t, 0, append(quickNoop, "--out", probe)...); code != 0 {
		t.Fatalf("probe run: exit %d\n%s", code, stderr)
	}
	txt, _ := os.Stat(filepath.Join(probe, "bench.txt"))
	js, _ := os.Stat(filepath.Join(probe, "bench.json"))
	if js.Size() < txt.Size()+1024 {
		t.Skipf("bench.json (%d B) is not larger than bench.txt (%d B) by enough to fit one alone", js.Size(), txt.Size())
	}
	limit := (txt.Size() + js.Size()) / 2
	// (An --out holding an earlier run's bench.json is refused before
	// anything runs: TestOutHoldingAnEarlierRunIsRefused.)
	out := filepath.Join(t.TempDir(), "full")
	code, stdout, stderr := cli(t, limit, append(quickNoop, "--out", out)...)
	if code != 1 || !strings.Contains(stdout, "BenchmarkNoop") || !strings.Contains(stderr, "bench.json") || !strings.Contains(stderr, "holds every result") {
		t.Errorf("bench.json too large: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, "bench.txt")); err != nil || strings.Count(string(b), "\nBenchmarkNoop") != 3 {
		t.Errorf("bench.txt not kept whole: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(out, "bench.json")); err == nil {
		t.Error("a partial bench.json is left beside the new bench.txt")
	}
	if tmps, _ := filepath.Glob(filepath.Join(out, ".bench*")); len(tmps) != 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
	out2 := filepath.Join(t.TempDir(), "fuller")
	code, stdout, stderr = cli(t, 100, append(quickNoop, "--out", out2)...)
	if code != 1 || !strings.Contains(stdout, "BenchmarkNoop") || !strings.Contains(stderr, "nothing was written") {
		t.Errorf("nothing fits: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	// Nor anywhere else (the file size limit holds for every file): the
	// raw results go to stderr.
	if !strings.Contains(stderr, "could be saved nowhere") || !regexp.MustCompile(`(?m)^BenchmarkNoop-\d+ `).MatchString(stderr) {
		t.Errorf("nothing fits: the raw results are not on stderr\n%s", stderr)
	}
}

// TestNightlyNeverReplacesARun: two nightly runs that take the same file
// name (same second, same commit, different locks) both keep their
// results (the second used to replace the first).
func TestNightlyNeverReplacesARun(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	fixed := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	outs := make([]string, 2)
	for i := range 2 {
		wg.Go(func() {
			var out, errb strings.Builder
			exe, _ := os.Executable()
			a := &app{registry: harness.Default, stdout: &out, stderr: &errb, executable: exe, now: func() time.Time { return fixed },
				header: func(h *report.Header) { h.Machine = "testhost" }}
			codes[i] = a.main(context.Background(), []string{"nightly", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--anchor", "none",
				"--allow-unpinned", "--forks", "1", "--warmup", "0", "--measure", "3x20ms", "--results", dir, "--lock", filepath.Join(t.TempDir(), fmt.Sprint("lock", i))})
			outs[i] = out.String() + errb.String()
		})
	}
	wg.Wait()
	id := hostcheck.Check(hostcheck.Local("0.1.0", hostcheck.Probe)).MachineID
	files, _ := filepath.Glob(filepath.Join(dir, "nightly", id, "2026", "12", "*.txt"))
	if codes[0] != 0 || codes[1] != 0 || len(files) != 2 {
		t.Fatalf("exits %v, recorded %v\n%s\n%s", codes, files, outs[0], outs[1])
	}
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Count(string(b), "\nBenchmarkNoop") != 3 {
			t.Errorf("%s does not hold its run", f)
		}
	}
}

// TestABCountsUntrackedFilesAsDirty: ab --head . compiles untracked Go
// files in, so the experiment's commit is marked +dirty.
func TestABCountsUntrackedFilesAsDirty(t *testing.T) {
	needGit(t)
	dir, c := tinyRepo(t)
	os.WriteFile(filepath.Join(dir, "extra.go"), []byte("package tiny\n\nvar Extra = 1\n"), 0o644)
	out := filepath.Join(t.TempDir(), "ab")
	code, _, stderr := abApp(t, dir, "ab", "--explain", "off", "--cmd", "./cmd/bench", "--base", c[2], "--head", ".", "--forks", "1",
		"--warmup", "0", "--measure", "2x10ms", "--min-change", "99", "--out", out)
	txt, _ := os.ReadFile(filepath.Join(out, "ab.txt"))
	if code != 0 || !strings.Contains(string(txt), "experiment-commit: "+c[2]+"+dirty") {
		t.Errorf("exit %d; ab.txt does not mark the tree with an untracked file dirty:\n%s\n%s", code, stderr, txt)
	}
}

// TestUsageErrorsFoundEarly: each is exit 2 before anything is measured
// or written (they used to run, run forever, or be found after results).
func TestUsageErrorsFoundEarly(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	os.WriteFile(good, []byte("BenchmarkX 1 10 ns/op\nBenchmarkX 1 11 ns/op\n"), 0o644)
	garbage := filepath.Join(dir, "garbage.bin")
	os.WriteFile(garbage, []byte{0, 1, 2, 0xff, '\n'}, 0o644)
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, nil, 0o644)
	run := func(extra ...string) []string {
		return append([]string{"run", "--suite", "clitest", "--bench", "^BenchmarkNoop$"}, extra...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{run("--timeout", "9223372036854775807ns"), "--timeout 2562047h47m16.854775807s: must be positive and at most 24h0m0s"},
		{run("--measure", "1x9223372036854775807ns"), "an iteration lasts at most 1h0m0s"},
		{run("--forks", "100000"), "--forks 100000: at most 10000 forks per case"},
		{run("--threads", "1000000"), "--threads 1000000: at most 16384 goroutines"},
		{run("--measure", "1000000000x1ms"), "at most 100000 iterations"},
		{run("--lock", ""), "--lock is empty"},
		{run("--idle-load", "NaN"), "--idle-load NaN: must be a finite number"},
		{[]string{"nightly", "--suite", "clitest", "--prof", "cpu", "--results", filepath.Join(dir, "r")}, "--prof is not supported by nightly"},
		{[]string{"nightly", "--suite", "clitest", "--explain", "some", "--results", filepath.Join(dir, "r")}, `--explain "some": changed`},
		{[]string{"nightly", "--suite", "clitest", "--allow-unpinned", "--anchor", "none", "--results", filepath.Join(notDir, "sub")}, "--results " + filepath.Join(notDir, "sub")},
		{[]string{"compare", "--alpha", "0", good}, "--alpha 0: must be between 0 and 1"},
		{[]string{"compare", "--alpha", "NaN", good}, "--alpha NaN: must be between 0 and 1"},
		{[]string{"compare", good, garbage}, garbage + " holds no benchmark result"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := tc.args
		if args[0] == "run" {
			args = append(args, "--out", out)
		}
		code, _, stderr := benchctl(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
		if strings.Contains(stderr, "[1/") {
			t.Errorf("%s: measured before refusing", strings.Join(tc.args, " "))
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: created %s", strings.Join(tc.args, " "), out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r")); err == nil {
		t.Error("nightly --prof created its results directory")
	}
}

// TestLockContentionLeavesNoOutput: a run refused because another holds
// the run lock exits 1 and leaves no empty --out behind.
func TestLockContentionLeavesNoOutput(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "lock")
	release, err := hostcheck.Lock(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := benchctl(t, append(quickNoop, "--lock", lock, "--out", out)...)
	if code != 1 || !strings.Contains(stderr, "another run holds the lock") || !strings.Contains(stderr, "--ignore-lock") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused run left its output directory")
	}
}
