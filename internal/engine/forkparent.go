package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/fork"
)

// forkResult is what one fork reported.
type forkResult struct {
	cpus       []int
	procs      int
	iterations []result.Iteration
	startup    time.Duration // exec to hello
	ready      time.Duration // exec to the first iteration's start
	sink       uint64
	goVersion  string // the child's runtime.Version
	unsynced   bool   // asked for lockstep, it ran without (a child of an older version)
}

// start answers a fork's ready frame with its schedule: its duet's, once
// the other fork is ready too, else one of its own.
func (rn *Runner) start(ctx context.Context, proc *fork.Process) error {
	sched := harness.Schedule{StartUnixNano: time.Now().UnixNano()}
	if rn.pair != nil {
		var err error
		if sched, err = rn.pair.arrive(ctx); err != nil {
			return err
		}
	}
	payload, err := json.Marshal(sched)
	if err != nil {
		return err
	}
	return proc.Send(fork.Go, payload)
}

// command is the program a fork runs: the executable itself, or a wrapper
// (valgrind) around it.
type command struct {
	path string
	args []string
	env  []string
}

func (rn *Runner) executable(exe string) (string, error) {
	if exe != "" {
		return exe, nil
	}
	return os.Executable()
}

func (rn *Runner) fork(ctx context.Context, exe string, p *harness.Plan, timeout time.Duration, cr *result.CaseResult) *result.ForkError {
	exe, err := rn.executable(exe)
	if err != nil {
		return &result.ForkError{Message: "find own executable: " + err.Error()}
	}
	res, fe := rn.forkOnce(ctx, command{exe, rn.Args, rn.Env}, p, timeout, rn.logFile(cr.Case, fmt.Sprintf("fork%d", p.Fork)))
	cr.Iterations = append(cr.Iterations, res.iterations...)
	cr.Sink ^= res.sink
	if res.cpus != nil {
		cr.ForkCPUs = append(cr.ForkCPUs, res.cpus)
	}
	if res.procs > 0 {
		cr.Procs = res.procs
	}
	if res.startup > 0 {
		cr.Startup = append(cr.Startup, res.startup)
	}
	if res.ready > 0 {
		cr.Ready = append(cr.Ready, res.ready)
	}
	if res.unsynced {
		cr.Notes = append(cr.Notes, fmt.Sprintf("fork %d did not keep the duet's schedule (its program predates lockstep): it ran at the same time as its pair, its iterations unaligned", p.Fork))
	}
	return fe
}

// fileName names a case's logs and profiles: the path elements of its
// benchfmt name, after its package's import path when the run's go test
// benchmarks come from several packages (two packages may each have a
// BenchmarkCompress), each escaped by safeElem.
func (rn *Runner) fileName(c result.Case) []string {
	name := c.Name()
	if rn.qualify {
		name = c.Pkg + "/" + name
	}
	elems := strings.Split(name, "/")
	for i, e := range elems {
		elems[i] = safeElem(e)
	}
	return elems
}

// safeElem is a name element as a file name that stays where it is put
// and is no other element's: letters, digits and . = - are kept, every
// other byte (the / of a flat log name's join, _, %, spaces, #) is %XX,
// and an element that is empty or only dots is escaped whole.
func safeElem(e string) string {
	var b strings.Builder
	dots := strings.Trim(e, ".") == ""
	for i := 0; i < len(e); i++ {
		c := e[i]
		if !dots && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '=' || c == '-') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	if b.Len() == 0 {
		return "%" // the empty element
	}
	return b.String()
}

// logFile opens DIR/logs/<case>.<suffix>.log, capped at LogCap, or
// returns nil.
func (rn *Runner) logFile(c result.Case, suffix string) *cappedLog {
	if rn.LogDir == "" {
		return nil
	}
	if rn.round > 0 {
		suffix = fmt.Sprintf("%s.round%d", suffix, rn.round) // a profiler's forks, one per round
	}
	if rn.side != "" {
		suffix = rn.side + "." + suffix // both sides of an A/B run have a fork 1
	}
	name := strings.Join(rn.fileName(c), "_") + "." + suffix + ".log"
	if err := os.MkdirAll(rn.LogDir, 0o755); err != nil {
		return nil
	}
	f, err := os.Create(filepath.Join(rn.LogDir, name))
	if err != nil {
		return nil
	}
	return &cappedLog{f: f, head: LogCap / 2, tail: make([]byte, LogCap/2)}
}

// forkOnce runs one fork of plan p with cmd and collects what it reports.
// The iterations it got are returned even when it fails.
func (rn *Runner) forkOnce(ctx context.Context, cmd command, p *harness.Plan, timeout time.Duration, log *cappedLog) (res forkResult, fe *result.ForkError) {
	var logw io.Writer
	if log != nil {
		defer log.Close()
		logw = log
	}
	env := cmd.env
	if len(rn.CPUs) > 0 && !hasEnv(env, "GOMAXPROCS") {
		env = append(append([]string(nil), env...), fmt.Sprintf("GOMAXPROCS=%d", len(rn.CPUs)))
	}
	proc, err := fork.Start(ctx, fork.Spec{Path: cmd.path, Args: cmd.args, Env: env, Log: logw, CPUs: rn.CPUs})
	if err != nil {
		return res, &result.ForkError{Message: err.Error()}
	}
	defer func() {
		werr := proc.Wait(5 * time.Second)
		if fe == nil && werr != nil {
			fe = &result.ForkError{Message: "child failed after reporting success"}
		}
		if fe != nil {
			if werr != nil {
				fe.Exit = fork.ExitStatus(werr)
			}
			fe.Tail = proc.StderrTail()
			if fatal := proc.Fatal(); fatal != "" && !slices.Contains(fe.Tail, fatal) {
				fe.Fatal = fatal
			}
			if log != nil {
				fe.Log = log.Name()
			}
		}
	}()
	fail := func(msg string, err error) *result.ForkError {
		switch {
		case ctx.Err() != nil:
			proc.Kill()
			return &result.ForkError{Message: msg + ": interrupted (the run was stopped while this fork ran); killed"}
		case errors.Is(err, fork.ErrTimeout):
			proc.Kill()
			return &result.ForkError{Message: fmt.Sprintf("%s: hung, no report for %s; killed", msg, timeout)}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			// Not killed: its exit status (Wait's grace) says whether it
			// exited or only closed the link.
			return &result.ForkError{Message: msg + ": the child closed its link without reporting (it exited, or closed fd 3)"}
		}
		proc.Kill()
		return &result.ForkError{Message: fmt.Sprintf("%s: %v", msg, err)}
	}
	f, err := proc.Next(timeout)
	if err != nil {
		return res, fail("waiting for hello", err)
	}
	if f.Type != fork.Hello {
		return res, fail("waiting for hello", fmt.Errorf("got a %s frame", f.Type))
	}
	res.startup = time.Since(proc.Started())
	var hi hello
	if err := json.Unmarshal(f.Payload, &hi); err != nil {
		return res, fail("decode hello", err)
	}
	res.cpus, res.procs, res.goVersion = hi.CPUs, hi.GOMAXPROCS, hi.GoVersion
	payload, err := json.Marshal(p)
	if err != nil {
		return res, fail("encode plan", err)
	}
	if err := proc.Send(fork.Plan, payload); err != nil {
		return res, fail("send plan", err)
	}
	return rn.reports(ctx, proc, p, res, timeout+max(p.Warmup.Time, p.Measure.Time), fail)
}

// reports reads a fork's reports after its plan: iterations, each the
// next its plan asks for, until done or an error; fail words a failure of
// the link. The iterations it got are returned even when it fails.
func (rn *Runner) reports(ctx context.Context, proc *fork.Process, p *harness.Plan, res forkResult, wait time.Duration,
	fail func(string, error) *result.ForkError) (forkResult, *result.ForkError) {
	ready := false
	for {
		f, err := proc.Next(wait)
		if err != nil {
			return res, fail("running", err)
		}
		switch f.Type {
		case fork.Ready:
			if !p.Lockstep || ready || len(res.iterations) > 0 {
				return res, fail("running", errors.New("a ready frame the plan did not ask for"))
			}
			ready = true
			if err := rn.start(ctx, proc); err != nil {
				return res, fail("starting in lockstep", err)
			}
		case fork.Iteration:
			if p.Lockstep && !ready && !res.unsynced {
				// A child that predates lockstep: it runs at the same
				// time as its pair, unscheduled; the pair waits no more.
				res.unsynced = true
				if rn.pair != nil {
					rn.pair.leave()
				}
			}
			var it result.Iteration
			if err := json.Unmarshal(f.Payload, &it); err != nil {
				return res, fail("decode iteration", err)
			}
			if err := planned(p, len(res.iterations), &it); err != nil {
				proc.Kill()
				res.iterations = nil
				return res, &result.ForkError{Message: err.Error() + ": results the plan did not ask for are not counted, nor any other of this fork"}
			}
			if len(res.iterations) == 0 {
				res.ready = time.Duration(it.StartUnixNano - proc.Started().UnixNano())
			}
			res.iterations = append(res.iterations, it)
		case fork.Done:
			var d done
			if err := json.Unmarshal(f.Payload, &d); err != nil {
				return res, fail("decode done", err)
			}
			res.sink = d.Sink
			if len(res.iterations) == 0 {
				return res, &result.ForkError{Message: "the child reported done without any iteration (a child of another version, or a broken one)"}
			}
			if n, want := len(res.iterations), p.Warmup.Count+p.Measure.Count; n != want {
				res.iterations = nil
				return res, &result.ForkError{Message: fmt.Sprintf("the child reported done after %d iterations where the plan asked for %d (%d warmup, %d measured): none is counted", n, want, p.Warmup.Count, p.Measure.Count)}
			}
			return res, nil
		case fork.Error:
			var fl failure
			if err := json.Unmarshal(f.Payload, &fl); err != nil {
				return res, fail("decode error report", err)
			}
			return res, &result.ForkError{Phase: fl.Phase, Message: fl.Message, Stack: fl.Stack}
		default:
			return res, fail("running", fmt.Errorf("unexpected %s frame", f.Type))
		}
	}
}

// planned checks that it, the i-th iteration a fork reported, is the one
// plan p asks for next: of p's fork, warmup iterations first, indices in
// order, no more than asked for. A child reports them so unless the
// benchmark writes on the link itself.
func planned(p *harness.Plan, i int, it *result.Iteration) error {
	w, m := p.Warmup.Count, p.Measure.Count
	if i >= w+m {
		return fmt.Errorf("the child reported iteration %d where the plan asked for %d (%d warmup, %d measured)", i+1, w+m, w, m)
	}
	warm, index := i < w, i
	if !warm {
		index = i - w
	}
	if it.Fork != p.Fork || it.Warmup != warm || it.Index != index {
		phase := func(warm bool) string {
			if warm {
				return "warmup"
			}
			return "measured"
		}
		return fmt.Errorf("the child reported %s iteration %d of fork %d where the plan asked for %s iteration %d of fork %d",
			phase(it.Warmup), it.Index, it.Fork, phase(warm), index, p.Fork)
	}
	return nil
}

func hasEnv(env []string, key string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, key+"=") {
			return true
		}
	}
	return false
}
