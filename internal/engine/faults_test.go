package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/fork"
)

// Fault helpers for the fork layer: benchmarks that start helpers, spin
// or flood, a fake child that breaks the protocol, and a parent process
// that a test can kill.

// helper starts `sleep 30` with this process's stdout and stderr, as a
// benchmark that shells out might, and records its PID in dir.
func helper(dir string) error {
	cmd := exec.Command("sleep", "30")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "helper.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
}

func init() {
	var n uint64
	work := func() { n++ }
	dir := func() string { return os.Getenv("FAULT_DIR") }
	for _, b := range []*harness.Benchmark{
		simple("Helper", func(*harness.Trial) error { return helper(dir()) }, work),
		simple("HelperExit", func(*harness.Trial) error {
			if err := helper(dir()); err != nil {
				return err
			}
			os.Exit(0)
			return nil
		}, work),
		simple("SpinPID", func(*harness.Trial) error {
			return os.WriteFile(filepath.Join(dir(), "spin.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
		}, work),
		simple("Flood", func(*harness.Trial) error {
			line := strings.Repeat("x", 1023) + "\n"
			for range 16 << 10 { // 16 MiB to stderr
				os.Stderr.WriteString(line)
			}
			return nil
		}, work),
	} {
		forkRegistry.Register(b)
	}
}

// fakeChild, in a child whose FAKE_CHILD says so, speaks the protocol
// wrongly and reports whether it did.
func fakeChild() bool {
	switch os.Getenv("FAKE_CHILD") {
	case "empty-done": // done with no iteration
		c, err := fork.OpenChild()
		if err != nil {
			os.Exit(9)
		}
		h, _ := json.Marshal(map[string]any{"pid": os.Getpid()})
		c.Send(fork.Hello, h)
		c.Receive()
		c.Send(fork.Done, []byte(`{"sink":0}`))
		os.Exit(0)
	}
	return false
}

// parentMain, in a process whose FAULT_PARENT names a benchmark, runs it
// as a benchctl parent would (forks with a long timeout) and reports
// whether it did.
func parentMain() bool {
	bench := os.Getenv("FAULT_PARENT")
	if bench == "" {
		return false
	}
	o := engine.DefaultOptions()
	o.Bench, o.Forks = bench, 1
	o.Warmup, o.Measure = result.IterSpec{}, result.IterSpec{Count: 1, Time: time.Minute}
	cases, err := o.Plan(forkRegistry)
	if err != nil {
		os.Exit(2)
	}
	exe, _ := os.Executable()
	os.Unsetenv("FAULT_PARENT")
	(&engine.Runner{Executable: exe}).Run(context.Background(), o, cases)
	os.Exit(0)
	return true
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil && !zombie(pid) }

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

func readPID(t *testing.T, path string, wait time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			pid, _ := strconv.Atoi(string(b))
			return pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s after %s", path, wait)
	return 0
}

func faultRun(t *testing.T, bench string, timeout time.Duration, env ...string) (*result.Run, time.Duration) {
	t.Helper()
	o := engine.DefaultOptions()
	o.Bench, o.Forks, o.Timeout = bench, 1, timeout
	o.Warmup = result.IterSpec{}
	o.Measure = result.IterSpec{Count: 2, Time: 10 * time.Millisecond}
	exe, _ := os.Executable()
	start := time.Now()
	run, err := runPlanned(t, &engine.Runner{Executable: exe, Env: env, LogDir: t.TempDir()}, forkRegistry, o)
	if err != nil {
		t.Fatal(err)
	}
	return run, time.Since(start)
}

// TestForkHelperKeepsOutputOpen: a benchmark whose helper process keeps
// the fork's stdout and stderr open neither hangs the parent nor outlives
// the fork (it used to hang for the helper's 30 s, past the timeout).
func TestForkHelperKeepsOutputOpen(t *testing.T) {
	dir := t.TempDir()
	run, took := faultRun(t, "^BenchmarkHelper$", 20*time.Second, "FAULT_DIR="+dir)
	if run.Failed() || took > 10*time.Second {
		t.Fatalf("took %s, failures %v", took, run.Cases[0].Failures)
	}
	pid := readPID(t, filepath.Join(dir, "helper.pid"), time.Second)
	time.Sleep(100 * time.Millisecond)
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Error("the fork's helper outlived it")
	}
}

// TestForkExitsAfterStartingAHelper: a child that exits without reporting
// after starting a helper is reported at once, not after the timeout (the
// helper inherited the link and kept it open).
func TestForkExitsAfterStartingAHelper(t *testing.T) {
	dir := t.TempDir()
	run, took := faultRun(t, "^BenchmarkHelperExit$", 20*time.Second, "FAULT_DIR="+dir)
	f := run.Cases[0].Failures
	if len(f) != 1 || !strings.Contains(f[0].Message, "exited without reporting") || took > 10*time.Second {
		t.Fatalf("took %s, failures %v", took, f)
	}
}

// TestForkDoneWithoutIterations: a child that sends done having sent no
// iteration has failed (it was counted as a success with no results).
func TestForkDoneWithoutIterations(t *testing.T) {
	run, _ := faultRun(t, "^BenchmarkGood$", 5*time.Second, "FAKE_CHILD=empty-done")
	f := run.Cases[0].Failures
	if len(f) != 1 || !strings.Contains(f[0].Message, "without any iteration") {
		t.Fatalf("failures %v, want one for the empty report", f)
	}
}

// TestForkDiesWithItsParent: SIGKILL of the parent kills the fork that was
// measuring (a spinning fork used to keep running beside the next run).
func TestForkDiesWithItsParent(t *testing.T) {
	dir := t.TempDir()
	exe, _ := os.Executable()
	parent := exec.Command(exe)
	parent.Env = append(os.Environ(), "FAULT_PARENT=^BenchmarkSpinPID$", "FAULT_DIR="+dir)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, filepath.Join(dir, "spin.pid"), 10*time.Second)
	parent.Process.Kill()
	parent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the fork outlived its killed parent by 5 s")
	}
}

// TestForkLogIsCapped: a benchmark flooding stderr (16 MiB) leaves a log of
// bounded size that keeps its head and tail, and the run succeeds.
func TestForkLogIsCapped(t *testing.T) {
	o := engine.DefaultOptions()
	o.Bench, o.Forks = "^BenchmarkFlood$", 1
	o.Warmup, o.Measure = result.IterSpec{}, result.IterSpec{Count: 1, Time: 10 * time.Millisecond}
	exe, _ := os.Executable()
	logs := t.TempDir()
	run, err := runPlanned(t, &engine.Runner{Executable: exe, LogDir: logs}, forkRegistry, o)
	if err != nil || run.Failed() {
		t.Fatalf("%v %v", err, run.Cases[0].Failures)
	}
	files, _ := filepath.Glob(filepath.Join(logs, "*Flood*.log"))
	if len(files) != 1 {
		t.Fatalf("logs %v", files)
	}
	fi, _ := os.Stat(files[0])
	b, _ := os.ReadFile(files[0])
	if fi.Size() > 3<<20 || !strings.Contains(string(b), "bytes left out") || !strings.HasPrefix(string(b), "xxx") {
		t.Errorf("log of %d bytes, want at most 3 MiB with its head, the elision and its tail", fi.Size())
	}
}
