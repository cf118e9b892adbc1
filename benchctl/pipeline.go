package benchctl

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

// measurement is what a measuring command (run, ab, nightly, calibrate)
// hands the pipeline: the planned cases, the sides that run them and
// where the results go. The command builds the sides (from the registry,
// test binaries or revisions); the pipeline runs, encodes, shows, writes
// and records them the same way for every command.
type measurement struct {
	o     engine.Options
	cases []engine.Case
	// sides run interleaved: one for run and nightly without an anchor,
	// two for an A/B run, whose names are the files' toolchain keys.
	sides []engine.Side
	// revs, for two revisions, record their commits in the header.
	revs   []revision.Revision
	notes  []string // the header's notes
	dir    string   // the source tree the header describes
	logDir string
	// profileDir receives run's profiles ("" for commands without them).
	profileDir string
	// out writes the encoded file; before, when set, sees what was
	// measured first, so a file that cannot be written loses no table.
	out    output
	before func(*measured) error
}

// measured is what the pipeline obtained.
type measured struct {
	runs   []*result.Run
	header report.Header // of the first side
	data   []byte        // the results file, as encoded
	path   string        // where it was written
	failed int           // failed forks and profiling forks
	// interrupted is the run's interruption (a signal), after the results
	// so far were written.
	interrupted error
}

// output is where a measurement's results file goes.
type output interface {
	// write stores the run and returns the file written.
	write(h report.Header, runs []*result.Run, data []byte) (string, error)
}

// resultsDir is run's output: bench.txt and bench.json in a directory.
type resultsDir string

func (d resultsDir) write(h report.Header, runs []*result.Run, data []byte) (string, error) {
	txt := filepath.Join(string(d), "bench.txt")
	if err := report.WriteRun(string(d), h, runs[0]); err != nil {
		if got, rerr := os.ReadFile(txt); rerr == nil && bytes.Equal(got, data) {
			return "", keptError{fmt.Errorf("writing results: %w", err)} // bench.json alone failed
		}
		return "", fmt.Errorf("writing results: %w", err)
	}
	return txt, nil
}

// keptError is a write that failed after every result was written.
type keptError struct{ error }

// resultsFile is one file of every side, written by put.
type resultsFile struct {
	path string
	put  func(path string, data []byte) (string, error)
}

func (f resultsFile) write(_ report.Header, _ []*result.Run, data []byte) (string, error) {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return "", fmt.Errorf("%v (the results were not written)", err)
	}
	p, err := f.put(f.path, data)
	if err != nil {
		return "", fmt.Errorf("%v (the results were not written)", err)
	}
	return p, nil
}

// replaceFile writes data to path, replacing what is there atomically.
func replaceFile(path string, data []byte) (string, error) {
	return path, report.WriteFileAtomic(path, data)
}

// measure runs m's sides on the prepared host s, interleaved, then shows
// and writes what they measured. A run interrupted midway still writes
// what it obtained, and says so in the measurement's interrupted.
func (a *app) measure(ctx context.Context, s *session, m *measurement) (*measured, error) {
	h := s.header(m.dir) // before the run: its Started is the run's start
	h.Notes = append(h.Notes, m.notes...)
	if len(m.revs) == 2 {
		h.BaselineCommit, h.ExperimentCommit = m.revs[0].Commit, m.revs[1].Commit
	}
	prog := newProgress(a.stderr)
	rn := &engine.Runner{Executable: a.executable, Args: a.childArgs, Env: a.childEnv,
		LogDir: m.logDir, ProfileDir: m.profileDir, Progress: prog.event, CPUs: m.o.CPUs, BeforeFork: s.beforeFork}
	runs, runErr := rn.RunSides(ctx, m.o, m.cases, m.sides)
	prog.close()
	if runs == nil {
		return nil, failedError{runErr.Error()}
	}
	r := &measured{runs: runs}
	var sides []report.Side
	for i, run := range runs {
		hs := h
		if len(runs) > 1 {
			hs.Toolchain = m.sides[i].Name
		}
		sides = append(sides, report.Side{Header: hs, Run: run})
	}
	r.header = sides[0].Header
	var buf bytes.Buffer
	if err := report.WriteSides(&buf, sides); err != nil {
		return r, failedError{err.Error()}
	}
	r.data = buf.Bytes()
	for _, run := range runs {
		r.failed += a.reportFailures(run)
	}
	if m.before != nil {
		if err := m.before(r); err != nil {
			return r, err
		}
	}
	path, err := m.out.write(r.header, runs, r.data)
	if err != nil {
		if errors.As(err, new(keptError)) {
			return r, failedError{err.Error()}
		}
		return r, failedError{err.Error() + a.rescue(r.data)}
	}
	r.path = path
	a.written = append(a.written, path)
	var planErr *engine.PlanError
	switch {
	case errors.As(runErr, &planErr):
		r.interrupted = usageError{fmt.Errorf("%w (the first rounds' results are in %s; --anyway measures within the budget regardless)", runErr, path)}
	case runErr != nil:
		r.interrupted = failedError{fmt.Sprintf("run interrupted: %v (results so far are in %s)", runErr, path)}
	}
	return r, nil
}

// rescue keeps results that could not be written where they belong: in a
// file of the temporary directory, or, when even that fails, on stderr.
// It says where, for the command's error.
func (a *app) rescue(data []byte) string {
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
	fmt.Fprintf(a.stderr, "%s: the results, which could be saved nowhere (%v):\n", a.name, err)
	a.stderr.Write(data)
	return "; every result is printed above, on stderr"
}

// outcome is the error that ends a command whose every result was
// written: an interruption, a failed fork, or packages that did not
// build.
func (r *measured) outcome(broken []string, where string) error {
	failed := r.failed
	switch {
	case r.interrupted != nil:
		return r.interrupted
	case failed > 0:
		return failedError{fmt.Sprintf("%d fork(s) failed; every result obtained is in %s", failed, where)}
	case len(broken) > 0:
		return failedError{fmt.Sprintf("%d package(s) did not build (%s); every result obtained is in %s", len(broken), strings.Join(broken, ", "), where)}
	}
	return nil
}
