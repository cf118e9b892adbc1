package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/fork"
)

// Fault helpers for the fork layer: benchmarks that start helpers, spin
// or flood, a fake child that breaks the protocol, and a parent process
// that a test can kill.

// helper starts `sleep 30` with this process's stdout and stderr, as a
// benchmark that shells out might, and records its PID in dir.
func helper(dir string) error { return startHelper(dir, false) }

// forge writes n iterations of fork forkNo on the link, then done, and exits:
// results no plan asked for.
func forge(n, forkNo int) error {
	link := os.NewFile(3, "link")
	for range n {
		it, _ := json.Marshal(result.Iteration{Fork: forkNo, Total: result.OpStats{Ops: 1000, NsPerOp: 0.001}})
		fork.Write(link, fork.Frame{Type: fork.Iteration, Payload: it})
	}
	fork.Write(link, fork.Frame{Type: fork.Done, Payload: []byte(`{}`)})
	os.Exit(0)
	return nil
}

// startHelper is helper, in a session of its own (setsid) when detach is
// set: out of the fork's process group.
func startHelper(dir string, detach bool) error {
	cmd := exec.Command("sleep", "30")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
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
		simple("SetsidHelper", func(*harness.Trial) error { return startHelper(dir(), true) }, work),
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
		simple("Fatal", nil, func() {
			// The shape of a Go out-of-memory death: the fatal line, then
			// a goroutine dump longer than the tail.
			fmt.Fprintln(os.Stderr, "fatal error: out of memory")
			for i := range 40 {
				fmt.Fprintf(os.Stderr, "goroutine %d [running]:\n\tmain.f()\n", i)
			}
			os.Exit(2)
		}),
		simple("CloseLink", func(*harness.Trial) error {
			os.NewFile(3, "link").Close()
			time.Sleep(50 * time.Millisecond)
			os.Exit(0)
			return nil
		}, work),
		// Forge writes its own results on the link: one iteration of
		// 0.001 ns/op, of another fork, then done, and exits.
		simple("Forge", func(*harness.Trial) error { return forge(1, 7) }, work),
		// ForgeAll forges as many iterations as the plan asks for, of the
		// right fork, but with its own indices.
		simple("ForgeAll", func(*harness.Trial) error { return forge(3, 1) }, work),
		simple("GoexitSetup", func(*harness.Trial) error {
			runtime.Goexit()
			return nil
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

// exits waits, at most within, for process pid to exit: on a pidfd,
// which becomes readable when the process ends (whoever its parent is),
// or, where the kernel has none, by looking until the deadline.
func exits(pid int, within time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		deadline := time.Now().Add(within)
		for alive(pid) {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(10 * time.Millisecond)
		}
		return true
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(within.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 1
	}
}

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

// TestForgedResultsAreNotCounted: a benchmark that writes iteration and
// done frames of its own is a failed fork, and nothing it sent counts:
// every iteration must be the next one of the plan (its fork, its phase,
// its index), and done must follow the last.
func TestForgedResultsAreNotCounted(t *testing.T) {
	for _, name := range []string{"BenchmarkForge", "BenchmarkForgeAll"} {
		run := forkRun(t, "^"+name+"$")
		cr := caseOf(t, run, name)
		if len(cr.Iterations) != 0 || len(cr.Failures) != 1 || !strings.Contains(cr.Failures[0].Error(), "the plan asked for") {
			t.Errorf("%s: %d iterations counted, failures %v", name, len(cr.Iterations), cr.Failures)
		}
	}
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
	if !exits(pid, 5*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Error("the fork's helper outlived it (it sleeps 30 s)")
	}
}

// TestForkSetsidHelperDiesWithTheFork: a helper that left the fork's
// session (setsid), out of reach of its process group, neither outlives
// the fork nor holds its output open until the wait's delay.
func TestForkSetsidHelperDiesWithTheFork(t *testing.T) {
	dir := t.TempDir()
	run, took := faultRun(t, "^BenchmarkSetsidHelper$", 20*time.Second, "FAULT_DIR="+dir)
	if run.Failed() {
		t.Fatalf("failures %v", run.Cases[0].Failures)
	}
	pid := readPID(t, filepath.Join(dir, "helper.pid"), time.Second)
	if !exits(pid, 5*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Error("the fork's setsid helper outlived it (it sleeps 30 s)")
	}
	if took > fork.WaitDelay {
		t.Errorf("took %s: the helper held the fork's output open", took)
	}
}

// TestForkExitsAfterStartingAHelper: a child that exits without reporting
// after starting a helper is reported at once, not after the timeout (the
// helper inherited the link and kept it open).
func TestForkExitsAfterStartingAHelper(t *testing.T) {
	dir := t.TempDir()
	run, took := faultRun(t, "^BenchmarkHelperExit$", 20*time.Second, "FAULT_DIR="+dir)
	f := run.Cases[0].Failures
	if len(f) != 1 || !strings.Contains(f[0].Message, "closed its link without reporting") || took > 10*time.Second {
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
	if pid := killParentDuring(t, "^BenchmarkSpinPID$", "spin.pid"); alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the fork outlived its killed parent by 5 s")
	}
}

// killParentDuring runs bench in a parent process of its own, kills the
// parent with SIGKILL once the PID file (written by the benchmark) names
// a process, and returns that PID after waiting up to 5 s for it to die.
func killParentDuring(t *testing.T, bench, pidFile string) int {
	t.Helper()
	dir := t.TempDir()
	exe, _ := os.Executable()
	parent := exec.Command(exe)
	parent.Env = append(os.Environ(), "FAULT_PARENT="+bench, "FAULT_DIR="+dir)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, filepath.Join(dir, pidFile), 10*time.Second)
	parent.Process.Kill()
	parent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return pid
}

// TestForkHelpersDieWithItsParent: SIGKILL of the parent ends the
// helpers of the fork's process group too, not only the fork (they used
// to run on, reparented, beside the next run).
func TestForkHelpersDieWithItsParent(t *testing.T) {
	if pid := killParentDuring(t, "^BenchmarkHelper$", "helper.pid"); alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the fork's helper outlived the killed parent by 5 s")
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

// TestForkFailureMessages: each failure says what happened. An
// out-of-memory death names its fatal line (pushed out of the tail by the
// goroutine dump) and the log; a child that closed its link is not called
// killed; a runtime.Goexit in Setup is named (all three used to read "the
// child exited without reporting (child signal: killed)").
func TestForkFailureMessages(t *testing.T) {
	for _, tc := range []struct {
		bench string
		want  []string
		not   string
	}{
		{"Fatal", []string{"it died of: fatal error: out of memory", "whole log: ", "exit status 2"}, ""},
		{"CloseLink", []string{"closed its link without reporting"}, "killed"},
		{"GoexitSetup", []string{"setup: runtime.Goexit was called"}, ""},
	} {
		run, _ := faultRun(t, "^Benchmark"+tc.bench+"$", 10*time.Second)
		f := run.Cases[0].Failures
		if len(f) != 1 {
			t.Errorf("%s: failures %v", tc.bench, f)
			continue
		}
		msg := f[0].Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", tc.bench, msg, w)
			}
		}
		if tc.not != "" && strings.Contains(msg, tc.not) {
			t.Errorf("%s: %q says %q", tc.bench, msg, tc.not)
		}
	}
}

// TestForkInterrupted: stopping a run names the fork that was running as
// interrupted, and leaves the cases that never ran without a failure (the
// table says "not run", not FAILED).
func TestForkInterrupted(t *testing.T) {
	dir := t.TempDir()
	o := engine.DefaultOptions()
	o.Bench, o.Forks = "^Benchmark(SpinPID|Good)$", 1
	o.Warmup, o.Measure = result.IterSpec{}, result.IterSpec{Count: 1, Time: time.Minute}
	o.Seed = 3 // SpinPID runs first in this order
	cases, err := o.Plan(forkRegistry)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		readPID(t, filepath.Join(dir, "spin.pid"), 10*time.Second)
		cancel()
	}()
	run, err := (&engine.Runner{Executable: exe, Env: []string{"FAULT_DIR=" + dir}}).Run(ctx, o, cases)
	if !errors.Is(err, context.Canceled) || run == nil {
		t.Fatalf("Run: %v", err)
	}
	spin, good := caseOf(t, run, "BenchmarkSpinPID"), caseOf(t, run, "BenchmarkGood")
	if len(spin.Failures) != 1 || !strings.Contains(spin.Failures[0].Message, "interrupted") {
		t.Errorf("the running fork: %v", spin.Failures)
	}
	if len(good.Failures) != 0 || len(good.Iterations) != 0 {
		t.Fatalf("seed %d ran Good first (%d iterations), not SpinPID: the seeded order changed, pick the seed again", o.Seed, len(good.Iterations))
	}
	var table strings.Builder
	report.WriteTable(&table, run)
	if !strings.Contains(table.String(), "not run") {
		t.Errorf("table:\n%s", table.String())
	}
}
