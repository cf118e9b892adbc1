package fork

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// TailLines is how many lines of the child's stderr a failure report shows.
const TailLines = 20

// Spec says how to start a child.
type Spec struct {
	Path string
	Args []string
	// Env is added to the parent's environment.
	Env []string
	// Log receives the child's stdout and stderr (nil discards them); the
	// last TailLines lines of stderr are kept for failure reports anyway.
	Log io.Writer
	// CPUs, when set, pins the child (every thread it will ever have) to
	// these CPUs: the child inherits the affinity of the thread that forks
	// it, which Start sets for the duration of the fork.
	CPUs []int
	// Dir is the child's working directory ("" keeps the parent's).
	Dir string
	// Stdout, when set, also receives the child's stdout (only).
	Stdout io.Writer
	// NoLink starts a program that does not speak the fork protocol (a go
	// test binary): no link on fds 3 and 4, no protocol marker in its
	// environment; Next reports io.EOF. The rest (its process group, its
	// death with the parent, the stderr tail, pinning) is the same.
	NoLink bool
}

// Process is the parent's handle on a running child.
type Process struct {
	cmd      *exec.Cmd
	toChild  *os.File
	frames   chan result
	tail     *tail
	started  time.Time
	waitErr  error
	waited   bool
	exited   chan struct{}
	exitOnce sync.Once
}

type result struct {
	f   Frame
	err error
}

// ErrTimeout is returned by Next when no frame arrived in time.
var ErrTimeout = errors.New("timed out waiting for the child")

// Start starts a child process with its link on fds 3 and 4 (none with
// Spec.NoLink).
func Start(ctx context.Context, s Spec) (*Process, error) {
	var fromChildR, fromChildW, toChildR, toChildW *os.File
	if !s.NoLink {
		var err error
		if fromChildR, fromChildW, err = os.Pipe(); err != nil {
			return nil, err
		}
		if toChildR, toChildW, err = os.Pipe(); err != nil {
			fromChildR.Close()
			fromChildW.Close()
			return nil, err
		}
	}
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	cmd := exec.CommandContext(ctx, s.Path, s.Args...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Dir = s.Dir
	if !s.NoLink {
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", EnvVar, Version))
		cmd.ExtraFiles = []*os.File{fromChildW, toChildR} // fds 3 and 4
	}
	// The child leads a process group of its own, so a kill reaches the
	// helpers it started; it dies with the parent (SIGKILL of benchctl
	// leaves no fork measuring beside the next run); and a helper that
	// keeps its stdout or stderr open delays Wait by WaitDelay at most.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if !s.NoLink {
		// A fork of this protocol takes its parent's death as SIGTERM and
		// kills its whole process group (OpenChild), helpers included.
		cmd.SysProcAttr.Pdeathsig = parentDeathSignal
	}
	cmd.WaitDelay = WaitDelay
	p := &Process{cmd: cmd, toChild: toChildW, frames: make(chan result, 16), tail: &tail{max: TailLines}, exited: make(chan struct{})}
	cmd.Cancel = func() error { p.Kill(); return nil }
	logw := s.Log
	if logw == nil {
		logw = io.Discard
	}
	lw := &lockedWriter{w: logw}
	cmd.Stdout = lw
	if s.Stdout != nil {
		cmd.Stdout = io.MultiWriter(lw, s.Stdout)
	}
	cmd.Stderr = io.MultiWriter(lw, p.tail)
	p.started = time.Now()
	becomeSubreaper()
	if err := startPinned(cmd, s.CPUs); err != nil {
		closeAll(fromChildR, fromChildW, toChildR, toChildW)
		return nil, fmt.Errorf("start fork: %w", err)
	}
	if s.NoLink {
		p.frames <- result{err: io.EOF}
		return p, nil
	}
	closeAll(fromChildW, toChildR)
	go func() {
		defer fromChildR.Close()
		for {
			f, err := Read(fromChildR)
			p.frames <- result{f, err}
			if err != nil {
				return
			}
		}
	}()
	return p, nil
}

// Exited is closed when the child has exited (it is not reaped: Wait
// does that).
func (p *Process) Exited() <-chan struct{} {
	p.exitOnce.Do(func() {
		pid := p.cmd.Process.Pid
		go func() {
			var info unix.Siginfo
			for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
			}
			close(p.exited)
		}()
	})
	return p.exited
}

// Started is when the child was started.
func (p *Process) Started() time.Time { return p.started }

// Send writes one frame to the child.
func (p *Process) Send(t Type, payload []byte) error {
	if p.toChild == nil {
		return errors.New("send: the child has no link (Spec.NoLink)")
	}
	return Write(p.toChild, Frame{Type: t, Payload: payload})
}

// Next returns the child's next frame, io.EOF when the child closed its
// link (it exited), or ErrTimeout after timeout.
func (p *Process) Next(timeout time.Duration) (Frame, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-p.frames:
		return r.f, r.err
	case <-t.C:
		return Frame{}, ErrTimeout
	}
}

// WaitDelay bounds how long Wait waits, after the child has exited, for
// the helpers that inherited its stdout and stderr to close them.
const WaitDelay = 2 * time.Second

// Kill kills the child and every process of its group (the helpers it
// started).
func (p *Process) Kill() {
	if p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		_ = p.cmd.Process.Kill()
	}
}

// Wait closes the link and waits for the child to exit, killing it if it
// has not exited within grace. It returns the exit error (nil for status 0).
func (p *Process) Wait(grace time.Duration) error {
	if p.waited {
		return p.waitErr
	}
	p.waited = true
	if p.toChild != nil {
		p.toChild.Close()
	}
	done := make(chan error, 1)
	pid := p.cmd.Process.Pid
	go func() {
		// Wait for the child to exit but leave it unreaped (WNOWAIT): its
		// PID, which is its group's ID, cannot be reused before it is
		// reaped, so killing the group kills the helpers it left running
		// (they would run beside the next fork) and nothing else.
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		killDetached() // and the helpers that left its group: none holds its output open
		done <- p.cmd.Wait()
	}()
	select {
	case p.waitErr = <-done:
	case <-time.After(grace):
		p.Kill()
		p.waitErr = <-done
		if p.waitErr == nil {
			p.waitErr = errors.New("killed after the grace period")
		}
	}
	if errors.Is(p.waitErr, exec.ErrWaitDelay) {
		p.waitErr = nil // the child exited cleanly; a helper held its output
	}
	return p.waitErr
}

// StderrTail returns the last lines the child wrote to stderr.
func (p *Process) StderrTail() []string { return p.tail.lines() }

// Fatal is the first line of the child's stderr that starts a Go fatal
// error or panic ("fatal error: out of memory"), or valgrind's line for an
// instruction it cannot decode or an assertion it failed, which a
// goroutine or register dump pushes out of the tail; "" if there was none.
func (p *Process) Fatal() string {
	p.tail.mu.Lock()
	defer p.tail.mu.Unlock()
	return p.tail.fatal
}

// tail keeps the last max lines written to it.
type tail struct {
	mu      sync.Mutex
	max     int
	partial []byte
	ls      []string
	fatal   string // the first fatal error or panic line, wherever it was
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, b...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.push(string(t.partial[:i]))
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > 64<<10 { // an endless line: keep its start
		t.push(string(t.partial[:4096]) + " …")
		t.partial = t.partial[:0]
	}
	return len(b), nil
}

func (t *tail) push(s string) {
	s = strings.TrimRight(s, "\r")
	if t.fatal == "" && (strings.HasPrefix(s, "fatal error: ") || strings.HasPrefix(s, "runtime: out of memory") || strings.HasPrefix(s, "panic: ") || valgrindFatal(s)) {
		t.fatal = s
	}
	t.ls = append(t.ls, s)
	if len(t.ls) > t.max {
		t.ls = t.ls[len(t.ls)-t.max:]
	}
}

// valgrindFatal reports whether s is valgrind's line for what kills the
// program it runs: an instruction it cannot decode (it then raises
// SIGILL, whose register dump fills the tail) or its own assertion.
func valgrindFatal(s string) bool {
	return strings.Contains(s, "unhandled instruction bytes: ") || (strings.Contains(s, "Assertion '") && strings.HasSuffix(s, "failed."))
}

func (t *tail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.ls...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
	}
	if len(out) > t.max {
		out = out[len(out)-t.max:]
	}
	return out
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// startPinned starts cmd from an OS thread whose affinity is set to cpus,
// so the child inherits it, and restores the thread's affinity after.
func startPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("read affinity: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to CPUs %v: %w", cpus, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil && err == nil {
		err = fmt.Errorf("restore affinity: %w", rerr)
	}
	return err
}

// ExitStatus words the error of a child's Wait: "exit status N" for a
// child that exited, else the error itself (a signal, say).
func ExitStatus(err error) string {
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return err.Error()
}
