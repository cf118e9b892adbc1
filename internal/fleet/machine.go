package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Spec is a job's plan, as Rounds.Spec carries it: the engine options
// its rounds run with (the coordinator's: warmup, measurement, seed,
// mode) and its cases, described, with the revisions the header names.
type Spec struct {
	Engine engine.Options      `json:"engine"`
	Cases  []engine.Described  `json:"cases"`
	Revs   []revision.Revision `json:"revs,omitempty"`
	// Build is the coordinator's source tree, which built the program a
	// run's job runs: its results file names that commit, not the
	// agent's.
	Build *session.Build `json:"build,omitempty"`
}

// Machine runs jobs on this machine (its Measure is an Agent's Measurer): each
// side's program fetched by its hash into Dir, the job's rounds run by
// the engine on the prepared Session (its host check, CPUs and run
// lock), the result file kept in memory and the logs of a job whose
// forks failed in Dir.
type Machine struct {
	Pool    *pgxpool.Pool
	Session *session.Session
	// CPUs are the CPUs the forks are pinned to (the session's).
	CPUs []int
	Dir  string
	// Name is the agent's, which each result file's header notes with
	// the job's comparison, rounds and attempt.
	Name string

	mu      sync.Mutex
	fetched map[string]string // hash → a program checked this agent's life
}

// program is the path of the program whose bytes hash to hash: fetched
// and checked once (Fetch), then taken as it is by the jobs that follow
// (a program is tens of MiB, and a comparison's jobs name the same two).
func (m *Machine) program(ctx context.Context, hash string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.fetched[hash]; ok {
		return p, nil
	}
	p, err := Fetch(ctx, m.Pool, hash, filepath.Join(m.Dir, "programs"))
	if err != nil {
		return "", err
	}
	if m.fetched == nil {
		m.fetched = map[string]string{}
	}
	m.fetched[hash] = p
	return p, nil
}

// launcher is what runs side a's forks: its program, or its packages'
// test binaries, each in its package's directory, fetched and checked.
func (m *Machine) launcher(ctx context.Context, a Artifact) (engine.Launcher, error) {
	if len(a.Tests) == 0 {
		exe, err := m.program(ctx, a.SHA256)
		return engine.Program{Executable: exe}, err
	}
	bins := engine.TestBinaries{}
	for _, t := range a.Tests {
		exe, err := m.program(ctx, t.Binary)
		if err != nil {
			return nil, err
		}
		dir, err := FetchDir(ctx, m.Pool, t.Dir, filepath.Join(m.Dir, "dirs"))
		if err != nil {
			return nil, err
		}
		bins[t.Pkg] = engine.TestBinary{Path: exe, Dir: dir}
	}
	return bins, nil
}

// Measure runs the job's rounds: rounds First to First+Count-1, as forks
// 1 to Count with the seed moved by First (every job of a comparison
// orders its sides afresh). It returns the results file and each side's
// result.Run, as JSON (a Measurer). A job this machine cannot run (a
// spec it cannot read, a program it cannot fetch) is cancelled, not
// retried.
func (m *Machine) Measure(ctx context.Context, job Rounds, attempt int) (file, runs []byte, err error) {
	var spec Spec
	if err := json.Unmarshal(job.Spec, &spec); err != nil {
		return nil, nil, river.JobCancel(fmt.Errorf("the job's plan cannot be read: %w", err))
	}
	if len(spec.Cases) == 0 || len(job.Sides) == 0 {
		return nil, nil, river.JobCancel(errors.New("the job has no case or no side"))
	}
	var sides []engine.Side
	for _, a := range job.Sides {
		launch, err := m.launcher(ctx, a)
		if errors.Is(err, ErrArtifact) {
			return nil, nil, river.JobCancel(fmt.Errorf("side %s: %w", a.Side, err))
		}
		if err != nil {
			return nil, nil, err
		}
		sides = append(sides, engine.Side{Name: a.Side, Launch: launch})
	}
	cases := make([]engine.Case, len(spec.Cases))
	for i, d := range spec.Cases {
		cases[i] = d.Runnable()
	}
	eo := spec.Engine
	eo.Forks, eo.Seed, eo.CPUs = job.Count, eo.Seed+uint64(job.First), m.CPUs
	logs := filepath.Join(m.Dir, "logs", fmt.Sprintf("job-%s-%d-attempt-%d", job.Comparison, job.First, attempt))
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, nil, err
	}
	note := fmt.Sprintf("fleet: comparison %s, round(s) %d-%d, attempt %d, agent %s", job.Comparison, job.First, job.First+job.Count-1, attempt, m.Name)
	r, err := m.Session.Record(ctx, &session.Recording{Options: eo, Cases: cases, Sides: sides, Revs: spec.Revs,
		Notes: []string{note}, Dir: logs, Build: spec.Build, LogDir: logs, Out: withTheJob{}})
	if err != nil {
		return nil, nil, err
	}
	if r.Interrupted != nil {
		return nil, nil, r.Interrupted
	}
	if r.Failed == 0 {
		os.RemoveAll(logs) // kept only to tell what a failed fork said
	}
	if runs, err = json.Marshal(r.Runs); err != nil {
		return nil, nil, err
	}
	return r.Data, runs, nil
}

// withTheJob is a Recording's Output that writes nothing: the results
// file (Recorded.Data) is committed with the job.
type withTheJob struct{}

func (withTheJob) Write(report.Header, []*result.Run, []byte) (string, error) {
	return "(kept with the job)", nil
}
