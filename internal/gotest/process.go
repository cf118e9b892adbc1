package gotest

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/fork"
)

// Process is one run of a test binary whose result lines of one
// benchmark are counted.
type Process struct {
	Binary string   // the test binary
	Dir    string   // where it runs: its package's directory, as go test runs it
	Args   []string // its arguments ([RunArgs] and any test flags)
	// Wrap, when set, is the program that runs the binary, with its own
	// arguments before the binary's path (callgrind); Env is added to the
	// environment.
	Wrap []string
	Env  []string
	CPUs []int // pins the process, when set
	// Bench is the benchmark whose result lines count (its full name
	// without the -N suffix), run at -test.cpu Procs.
	Bench string
	Procs int
	// Wait is how long the process may print no result line before it
	// is killed as hung.
	Wait time.Duration
	// Log receives its stdout and stderr (nil discards them), kept under
	// the name LogName that messages cite.
	Log     io.Writer
	LogName string
}

// Outcome is what one process of a test binary reported.
type Outcome struct {
	Results  []*Result // the benchmark's result lines, in order
	Warnings []string  // output lines that could not be counted, named
	Failed   []string  // its first --- FAIL: block
	Skipped  string    // why it skipped (--- SKIP:)
	// FirstLine is exec to its first line of output (the start of its
	// first benchmark), Started exec to the start of the benchmark run.
	FirstLine, Started time.Duration
	CPUs               []int
	// Err is why the process failed: it exited non-zero or without go
	// test's PASS, hung, or the run was interrupted. Results are counted
	// only from a process that ended with PASS.
	Err *result.ForkError
}

// Why says why a process gave fewer results than asked: its skip or its
// first failure ("" when it said neither).
func (o *Outcome) Why() string {
	switch {
	case o.Skipped != "":
		return ": it skipped: " + o.Skipped
	case len(o.Failed) > 0:
		return ":\n  " + strings.Join(o.Failed, "\n  ")
	}
	return ""
}

// Run runs a test binary until it exits, reading its output line by line
// as it arrives: a process that prints no result line for p.Wait is
// killed as hung.
func Run(ctx context.Context, p Process) (o Outcome) {
	path, args := p.Binary, p.Args
	if len(p.Wrap) > 0 {
		path, args = p.Wrap[0], append(append(p.Wrap[1:len(p.Wrap):len(p.Wrap)], p.Binary), p.Args...)
	}
	q := newLineQueue()
	proc, err := fork.Start(ctx, fork.Spec{Path: path, Args: args, Env: p.Env, Dir: p.Dir, NoLink: true, Stdout: q, CPUs: p.CPUs, Log: p.Log})
	if err != nil {
		o.Err = &result.ForkError{Message: err.Error()}
		return o
	}
	o.CPUs = p.CPUs
	timer := time.NewTimer(p.Wait)
	defer timer.Stop()
	out := &output{o: &o, p: &p, started: proc.Started(), result: func() { timer.Reset(p.Wait) }}
	var hung, interrupted bool
loop:
	for {
		select {
		case <-q.signal:
			out.lines(q.take())
		case <-proc.Exited():
			break loop
		case <-timer.C:
			hung = true
			proc.Kill()
			break loop
		case <-ctx.Done():
			interrupted = true
			proc.Kill()
			break loop
		}
	}
	werr := proc.Wait(5 * time.Second)
	q.close()
	out.lines(q.take())
	out.done()
	fail := func(msg string) {
		o.Err = &result.ForkError{Message: msg, Tail: proc.StderrTail(), Fatal: proc.Fatal(), Log: p.LogName}
		if werr != nil {
			o.Err.Exit = fork.ExitStatus(werr)
		}
		if o.Err.Fatal != "" && slices.Contains(o.Err.Tail, o.Err.Fatal) {
			o.Err.Fatal = ""
		}
	}
	switch {
	case interrupted:
		fail("interrupted (the run was stopped while this fork ran); killed")
	case hung:
		fail(fmt.Sprintf("hung: no result for %s; killed", p.Wait))
	case werr != nil:
		fail("the test binary failed" + o.Why())
	case !out.passed:
		// It exited 0 without go test's PASS: not go test's end (os.Exit
		// from the benchmark, say).
		fail("the test binary exited without go test's final PASS line" + o.Why())
	}
	out.vouch()
	return o
}

// maxWarnings is how many unreadable lines of one process are named.
const maxWarnings = 3

// output reads a test binary's output lines into its Outcome: the
// benchmark's result lines, its --- FAIL: block and skip, go test's PASS,
// and a warning for each line that cannot be counted.
type output struct {
	o                        *Outcome
	p                        *Process
	started                  time.Time // the process's start
	result                   func()    // called for each result line counted
	lineNo, unread, failures int
	inFail, passed           bool
}

// lines reads the next lines.
func (t *output) lines(ls []timedLine) {
	o := t.o
	for _, tl := range ls {
		t.lineNo++
		line := tl.text
		if t.lineNo == 1 {
			o.FirstLine = tl.at.Sub(t.started)
		}
		if line == t.p.Bench && o.Started == 0 {
			o.Started = tl.at.Sub(t.started)
		}
		if t.inFail && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) {
			if t.failures == 1 {
				o.Failed = append(o.Failed, strings.TrimSpace(line))
			}
			continue
		}
		t.inFail = false
		switch {
		case line == "PASS":
			// go test's own last word for a binary whose tests and
			// benchmarks all passed.
			t.passed = true
			continue
		case strings.HasPrefix(line, "--- FAIL: "):
			// The first failure in full; the runs after it fail alike.
			t.inFail = true
			if t.failures++; t.failures == 1 {
				o.Failed = append(o.Failed, line)
			}
			continue
		case strings.HasPrefix(line, "--- SKIP: "):
			o.Skipped = strings.TrimPrefix(line, "--- SKIP: ")
			continue
		}
		t.count(line)
	}
}

// count counts line when it is a result of the benchmark, and warns
// about it when it cannot be counted.
func (t *output) count(line string) {
	res, err := ParseLine(line, t.p.Procs)
	switch {
	case err != nil:
		t.warn(fmt.Sprintf("output line %d cannot be read as a result (%v), not counted: %q%s", t.lineNo, err, clip(line), t.logNote()))
	case res == nil:
	case res.Name != t.p.Bench:
		t.warn(fmt.Sprintf("output line %d is a result of %s, not of this benchmark, not counted: %q%s", t.lineNo, res.Name, clip(line), t.logNote()))
	default:
		t.o.Results = append(t.o.Results, res)
		t.result()
	}
}

func (t *output) warn(w string) {
	if t.unread++; t.unread <= maxWarnings {
		t.o.Warnings = append(t.o.Warnings, w)
	}
}

// done adds, after the last line, how many warnings were not kept.
func (t *output) done() {
	if t.unread > maxWarnings {
		t.o.Warnings = append(t.o.Warnings, fmt.Sprintf("and %d more output lines not counted%s", t.unread-maxWarnings, t.logNote()))
	}
}

// vouch drops the result lines of a binary that did not reach go test's
// PASS (text anyone in the process can print: only PASS vouches for
// them), and says how often a failing benchmark failed.
func (t *output) vouch() {
	o := t.o
	if !t.passed && len(o.Results) > 0 {
		o.Results = nil
		o.Err.Message += "\n  (its result lines are not counted: only a test binary that ends with PASS vouches for them)"
	}
	if o.Err != nil && t.failures > 1 {
		o.Err.Message += fmt.Sprintf("\n  (it failed %d times in this fork)", t.failures)
	}
}

// logNote says where the whole output is kept.
func (t *output) logNote() string {
	if t.p.LogName == "" {
		return ""
	}
	return " (kept in " + t.p.LogName + ")"
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
