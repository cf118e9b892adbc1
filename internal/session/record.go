package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// Recording is what a measuring command hands the pipeline: the planned
// cases, the sides that run them and where the results go. The command
// builds the sides (from the registry, test binaries or revisions); the
// pipeline runs, encodes, writes and reports them the same way for every
// command.
type Recording struct {
	Options engine.Options
	Cases   []engine.Case
	// Sides run interleaved: one for run and nightly without an anchor,
	// two for an A/B run, whose names are the files' toolchain keys.
	Sides []engine.Side
	// Revs, for two revisions, record their commits in the header.
	Revs  []revision.Revision
	Notes []string // the header's notes
	Dir   string   // the source tree the header describes
	// Build, when set, says what the header says of the measured build
	// instead of Dir: a fleet's job runs a program built elsewhere.
	Build  *Build
	LogDir string
	// ProfileDir receives run's profiles ("" for commands without them).
	ProfileDir string
	// Out writes the encoded file; Before, when set, sees what was
	// measured first, so a file that cannot be written loses no table.
	Out    Output
	Before func(*Recorded) error
	// Decide, with Options.UntilDecided, decides the rows of the results
	// file so far, encoded as it will be written, after each round: the
	// returned function says whether a case (by name) is decided.
	Decide func(data []byte) (func(name string) bool, error)
}

// Build is what a header says of the measured program's build: the
// commit of its source tree, that commit's time, whether the tree had
// changes, and the toolchain.
type Build struct {
	Commit     string `json:"commit"`
	CommitTime string `json:"commitTime"`
	Dirty      string `json:"dirty"`
	Go         string `json:"go"`
}

// BuildOf is what header h says of its build.
func BuildOf(h report.Header) *Build {
	return &Build{Commit: h.Commit, CommitTime: h.CommitTime, Dirty: h.Dirty, Go: h.Go}
}

// Recorded is what the pipeline obtained.
type Recorded struct {
	Runs   []*result.Run
	Header report.Header // of the first side
	Data   []byte        // the results file, as encoded
	Path   string        // where it was written
	Failed int           // failed forks and profiling forks
	// Interrupted is the run's interruption (a signal, or a plan that
	// cannot be met), after the results so far were written.
	Interrupted error
}

// Output is where a measurement's results file goes.
type Output interface {
	// Write stores the run and returns the file written.
	Write(h report.Header, runs []*result.Run, data []byte) (string, error)
}

// ResultsDir is run's output: bench.txt and bench.json in a directory.
type ResultsDir string

func (d ResultsDir) Write(h report.Header, runs []*result.Run, data []byte) (string, error) {
	txt := filepath.Join(string(d), "bench.txt")
	if err := report.WriteRun(string(d), h, runs[0]); err != nil {
		if got, rerr := os.ReadFile(txt); rerr == nil && bytes.Equal(got, data) {
			return "", keptError{fmt.Errorf("writing results: %w", err)} // bench.json alone failed
		}
		return "", fmt.Errorf("writing results: %w", err)
	}
	return txt, nil
}

// ResultsFile is one file of every side, written by Put.
type ResultsFile struct {
	Path string
	Put  func(path string, data []byte) (string, error)
}

func (f ResultsFile) Write(_ report.Header, _ []*result.Run, data []byte) (string, error) {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return "", fmt.Errorf("%v (the results were not written)", err)
	}
	p, err := f.Put(f.Path, data)
	if err != nil {
		return "", fmt.Errorf("%v (the results were not written)", err)
	}
	return p, nil
}

// ReplaceFile writes data to path, replacing what is there atomically.
func ReplaceFile(path string, data []byte) (string, error) {
	return path, report.WriteFileAtomic(path, data)
}

// Record runs m's sides on the prepared host, interleaved, then encodes
// and writes what they measured. A run interrupted midway still writes
// what it obtained, and says so in the result's Interrupted.
func (s *Session) Record(ctx context.Context, m *Recording) (*Recorded, error) {
	h := s.Header(m.Dir) // before the run: its Started is the run's start
	h.Notes = append(h.Notes, m.Notes...)
	if b := m.Build; b != nil {
		h.Commit, h.CommitTime, h.Dirty, h.Go = b.Commit, b.CommitTime, b.Dirty, b.Go
	}
	if len(m.Revs) == 2 {
		h.BaselineCommit, h.ExperimentCommit = m.Revs[0].Commit, m.Revs[1].Commit
	}
	env := s.Env
	rn := s.runner(m)
	if m.Decide != nil {
		rn.Decided = m.decided(h, env)
	}
	done := func() {}
	if env.Progress != nil {
		rn.Progress, done = env.Progress()
	}
	runs, runErr := rn.RunSides(ctx, m.Options, m.Cases, m.Sides)
	done()
	if runs == nil {
		return nil, FailedError{Msg: runErr.Error()}
	}
	r := &Recorded{Runs: runs}
	var err error
	if r.Header, r.Data, err = m.encode(h, runs); err != nil {
		return r, FailedError{Msg: err.Error()}
	}
	for _, run := range runs {
		r.Failed += env.ReportFailures(run)
	}
	if m.Before != nil {
		if err := m.Before(r); err != nil {
			return r, err
		}
	}
	path, err := m.Out.Write(r.Header, runs, r.Data)
	if err != nil {
		if errors.As(err, new(keptError)) {
			return r, FailedError{Msg: err.Error()}
		}
		return r, FailedError{Msg: err.Error() + env.Rescue(r.Data)}
	}
	r.Path = path
	if env.Wrote != nil {
		env.Wrote(path)
	}
	var planErr *engine.PlanError
	switch {
	case errors.As(runErr, &planErr):
		r.Interrupted = Input("%w (the first rounds' results are in %s; {Anyway} measures within the budget regardless)", runErr, path)
	case runErr != nil:
		r.Interrupted = FailedError{Msg: fmt.Sprintf("run interrupted: %v (results so far are in %s)", runErr, path)}
	}
	return r, nil
}

// runner is the engine's Runner of m on s's host.
func (s *Session) runner(m *Recording) *engine.Runner {
	env := s.Env
	return &engine.Runner{Executable: env.Executable, Args: env.ChildArgs, Env: env.ChildEnv,
		LogDir: m.LogDir, ProfileDir: m.ProfileDir, CPUs: m.Options.CPUs, BeforeFork: s.BeforeFork}
}

// Profile runs only the profiling forks of m (Options.Profiles in
// Options.ProfileRounds rounds) on the prepared host, into m.ProfileDir:
// for profiles of cases already measured. Nothing is encoded or written
// but the profiles; failed profiling forks are said and counted.
func (s *Session) Profile(ctx context.Context, m *Recording) ([]*result.Run, int, error) {
	rn := s.runner(m)
	done := func() {}
	if s.Env.Progress != nil {
		rn.Progress, done = s.Env.Progress()
	}
	runs, err := rn.ProfileSides(ctx, m.Options, m.Cases, m.Sides)
	done()
	failed := 0
	for _, run := range runs {
		failed += s.Env.ReportFailures(run)
	}
	return runs, failed, err
}

// encode is the results file of runs: every side under header h, named
// after its side when there are two; and the first side's header.
func (m *Recording) encode(h report.Header, runs []*result.Run) (report.Header, []byte, error) {
	var sides []report.Side
	for i, run := range runs {
		hs := h
		if len(runs) > 1 {
			hs.Toolchain = m.Sides[i].Name
		}
		sides = append(sides, report.Side{Header: hs, Run: run})
	}
	var buf bytes.Buffer
	err := report.WriteSides(&buf, sides)
	return sides[0].Header, buf.Bytes(), err
}

// decided is the Runner's Decided of m: the runs so far encoded as the
// file will be and decided by m.Decide. A file that cannot be decided
// decides no case (the rounds go on to the budget), and says why once.
func (m *Recording) decided(h report.Header, env *Env) func([]*result.Run) []bool {
	said := false
	return func(runs []*result.Run) []bool {
		out := make([]bool, len(runs[0].Cases))
		_, data, err := m.encode(h, runs)
		var isDecided func(string) bool
		if err == nil {
			isDecided, err = m.Decide(data)
		}
		if err != nil {
			if !said {
				env.Say("the rounds so far could not be decided (%v): every case gets rounds until the budget is spent", err)
				said = true
			}
			return out
		}
		for i, cr := range runs[0].Cases {
			out[i] = isDecided(cr.Case.Name())
		}
		return out
	}
}

// ReportFailures says which forks and profiling forks of run failed, and
// counts them.
func (e *Env) ReportFailures(run *result.Run) int {
	var failed int
	for _, cr := range run.Cases {
		for _, fe := range cr.Failures {
			failed++
			e.Say("FAILED %s", fe.Error())
		}
		for _, pr := range cr.Profiles {
			if pr.Err != nil {
				failed++
				e.Say("FAILED profiling fork %s of %s: %v", pr.Kind, cr.Case.Name(), pr.Err)
			}
		}
	}
	return failed
}

// Rescue keeps results that could not be written where they belong: in a
// file of the temporary directory, or, when even that fails, on stderr.
// It says where, for the command's error.
func (e *Env) Rescue(data []byte) string {
	f, err := os.CreateTemp("", "benchctl-results-*.txt")
	if err == nil {
		_, err = f.Write(data)
		if serr := f.Sync(); err == nil {
			err = serr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			return fmt.Sprintf("; every result is saved in %s instead", f.Name())
		}
		os.Remove(f.Name())
	}
	e.Say("the results, which could be saved nowhere (%v):", err)
	e.stderr().Write(data)
	return "; every result is printed above, on stderr"
}

// Outcome is the error that ends a command whose every result was
// written: an interruption, a failed fork, or packages that did not
// build.
func (r *Recorded) Outcome(broken []string, where string) error {
	switch {
	case r.Interrupted != nil:
		return r.Interrupted
	case r.Failed > 0:
		return FailedError{Msg: fmt.Sprintf("%d fork(s) failed; every result obtained is in %s", r.Failed, where)}
	case len(broken) > 0:
		return FailedError{Msg: fmt.Sprintf("%d package(s) did not build (%s); every result obtained is in %s", len(broken), strings.Join(broken, ", "), where)}
	}
	return nil
}

// KeepLogs removes the fork logs of a measurement that went well, and
// says where they are otherwise.
func (e *Env) KeepLogs(logs string, r *Recorded, err error) {
	if err == nil && r != nil && r.Failed == 0 && r.Interrupted == nil {
		os.RemoveAll(logs)
		return
	}
	e.Say("fork logs in %s", logs)
}
