package ab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Remote measures an A/B's rounds on other machines (a fleet's agents)
// instead of this one.
type Remote interface {
	// Measure runs r's rounds and returns the result files it gathered
	// into r.Dir, one per machine that measured: each file is a stratum
	// of the comparison (a pair is two sides on one machine in one
	// round).
	Measure(ctx context.Context, env *session.Env, r Rounds) ([]string, error)
}

// Fleets connects to the fleet o names, to measure on its agents of
// o.Class; the caller closes the Closer. It is set by the package that
// links the fleet's queue (internal/fleetcmd, imported by the programs
// that run fleets, as database/sql's drivers register themselves) and
// nil in a program without it.
var Fleets func(ctx context.Context, o FleetOptions) (Remote, io.Closer, error)

// DefaultJobTime is the planned length of a fleet's job: long enough
// that an agent's start of a job (fetching, the host check) is small
// beside it, short enough that a fleet shares a comparison evenly and a
// lost agent loses little.
const DefaultJobTime = 3 * time.Minute

// FleetOptions name a fleet and how its jobs are cut.
type FleetOptions struct {
	// URL is the fleet's PostgreSQL database.
	URL string
	// Class is the class of machines to measure on.
	Class string
	// JobTime is a job's planned machine time (0: the fleet's default).
	JobTime time.Duration
}

// RunsFile is the file of a Remote's Dir that holds the sides'
// result.Runs as JSON, every machine's forks joined, when the machines
// kept them: what a run's bench.json and JMH table are made from.
const RunsFile = "runs.json"

// Rounds are the rounds an A/B asks of a Remote: Engine.Forks rounds
// from Engine.Seed of Cases on the two Sides (programs built here).
type Rounds struct {
	Engine engine.Options
	Cases  []engine.Case
	Sides  []engine.Side
	Revs   []revision.Revision
	Dir    string
}

// ErrFleetPackages refuses go test packages where a fleet runs the
// program that asks (run's and nightly's): ab and bisect run them there.
var ErrFleetPackages = session.Input("{Fleet} runs this program's benchmarks here; a package's go test benchmarks run on a fleet with ab or bisect")

// checkRemote refuses what a fleet cannot run yet: the rules that add
// rounds by looking at them, and profiles. (Go test packages run there:
// each package's test binary is shipped with its directory.)
func (o *Options) checkRemote() error {
	switch e := o.Engine; {
	case o.Remote == nil:
		return nil
	case e.Detect > 0 || e.Precision > 0:
		return session.Input("{Fleet} adds rounds until every row is decided ({UntilDecided}, {Budget}): {Detect} and {Precision} run on one machine")
	case len(e.Profiles) > 0:
		return session.Input("{Fleet} measures time: {Profiles} runs on one machine")
	}
	return nil
}

// measureRemote is measure on o.Remote: the machines' files, one after
// another, are file in o.Out, and the rows are decided with each
// machine's pairs as a stratum. Until decided, it measures in batches
// (Sequentially): the first rounds, then as many again of the rows still
// undecided, while the budget leaves time for a batch.
func measureRemote(ctx context.Context, s *session.Session, o Options, set *Sides, seed uint64, file string, co compare.Options) (*compare.Tables, *session.Recorded, error) {
	eo := o.Engine
	eo.Seed = seed
	r := Rounds{Engine: eo, Cases: set.Cases, Sides: set.Sides, Revs: set.Revs}
	path := filepath.Join(o.Out, file)
	stem := strings.TrimSuffix(file, ".txt")
	if !eo.UntilDecided {
		r.Dir = filepath.Join(o.Out, stem+"-machines")
		ts, _, rec, err := Remotely(ctx, s.Env, o.Remote, r, nil, path, co)
		return ts, rec, err
	}
	r.Engine.UntilDecided, r.Engine.Budget = false, 0
	start := time.Now()
	began, measured := start, len(set.Cases)
	next := func(ts *compare.Tables, _ []string, rounds int) []engine.Case {
		var undecided []engine.Case
		for _, c := range set.Cases {
			if !ts.Decided(c.Name()) {
				undecided = append(undecided, c)
			}
		}
		batch := r.Engine
		if len(undecided) == 0 || rounds+batch.Forks > engine.MaxForks ||
			eo.Budget > 0 && time.Since(start)+nextBatch(batch, time.Since(began), measured, len(undecided)) > eo.Budget {
			return nil
		}
		s.Env.Say("fleet: %d row(s) undecided after %d rounds; %d more rounds of them", len(undecided), rounds, batch.Forks)
		began, measured = time.Now(), len(undecided)
		return undecided
	}
	ts, _, rec, _, err := Sequentially(ctx, s.Env, o.Remote, r, filepath.Join(o.Out, stem+"-batch"), path, co, next)
	return ts, rec, err
}

// Batches is what RunUntilDecided measured.
type Batches struct {
	Tables *compare.Tables   // every row, over every batch
	Paths  []string          // every batch's machines' files
	Rec    *session.Recorded // what was written
	Rounds int               // of the most measured case
	Took   time.Duration     // until decided: the batches' wall time
	// Runs are the sides' runs, every batch's forks of a case joined
	// (nil when the machines kept none).
	Runs []*result.Run
}

// RunUntilDecided measures a run's cases (r, one side) on remote in
// batches of r.Engine.Forks rounds (Sequentially, into dir-N and path),
// until decided, given the files of every batch so far, says every case
// is, the next batch would end past budget (0: none), or a case has
// engine.MaxForks rounds. A batch measures the whole comparison groups
// (engine.Groups) of the cases not decided: a group's cases are compared
// by round on one machine.
func RunUntilDecided(ctx context.Context, env *session.Env, remote Remote, r Rounds, budget time.Duration, dir, path string,
	decided func(paths []string) (func(string) bool, error)) (*Batches, error) {
	all, groups := r.Cases, engine.Groups(r.Cases)
	start := time.Now()
	began, measured := start, len(all)
	next := func(_ *compare.Tables, paths []string, rounds int) []engine.Case {
		is, err := decided(paths)
		if err != nil {
			env.Say("fleet: the rows could not be decided: %v", err)
			return nil
		}
		var open []engine.Case
		for _, g := range groups {
			if slices.ContainsFunc(g, func(i int) bool { return !is(all[i].Name()) }) {
				for _, i := range g {
					open = append(open, all[i])
				}
			}
		}
		one := r.Engine // a round of a case is one fork: half an A/B's
		if len(open) == 0 || rounds+one.Forks > engine.MaxForks ||
			budget > 0 && time.Since(start)+nextBatch(one, time.Since(began), measured, len(open))/2 > budget {
			return nil
		}
		env.Say("fleet: %d case(s) of undecided rows after %d rounds; %d more rounds of them", len(open), rounds, one.Forks)
		began, measured = time.Now(), len(open)
		return open
	}
	ts, paths, rec, rounds, err := Sequentially(ctx, env, remote, r, dir, path, compare.Options{}, next)
	b := &Batches{Tables: ts, Paths: paths, Rec: rec, Rounds: rounds}
	if err != nil {
		return b, err
	}
	var dirs []string // the batches', as Sequentially names them
	for b := 1; ; b++ {
		d := fmt.Sprintf("%s-%d", dir, b)
		if _, err := os.Stat(d); err != nil {
			break
		}
		dirs = append(dirs, d)
	}
	if b.Runs, err = joinBatches(dirs); err != nil {
		env.Say("the runs of the batches (for bench.json and the JMH table) are left out: %v", err)
	}
	return b, nil
}

// joinBatches reads each batch directory's RunsFile and joins them
// (result.JoinRuns): a case's forks of a later batch numbered after its
// earlier ones. nil when a batch has none.
func joinBatches(dirs []string) ([]*result.Run, error) {
	var out []*result.Run
	for _, d := range dirs {
		runs, err := ReadRuns(d)
		if err != nil || runs == nil {
			return nil, err
		}
		if out, err = result.JoinRuns(out, runs, (*result.CaseResult).Forks); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
	}
	return out, nil
}

// nextBatch is how long a fleet's batch of cases cases is expected to
// take: the rounds' planned time, or, when longer, the last batch's wall
// time (took, for measured cases) in proportion: a fleet adds the
// agents' polling, its forks' start and a loaded machine's slowness,
// which the plan does not know.
func nextBatch(o engine.Options, took time.Duration, measured, cases int) time.Duration {
	return max(engine.FirstRounds(o, cases), took*time.Duration(cases)/time.Duration(max(measured, 1)))
}

// Sequentially measures r on remote in batches of r.Engine.Forks rounds,
// each with a seed of its own (r's moved by the batch), its machines'
// files in dir-N: after every batch it decides the rows with all the
// batches before (co, the anytime-valid test: the rounds were added by
// looking) into path, and next, given those tables, the files of every
// batch so far and the rounds measured, names the cases the next batch
// measures (none: it stops). It stops too after a batch with a failed
// fork. It returns the last tables, the files of every batch and what
// was written, and the rounds measured.
func Sequentially(ctx context.Context, env *session.Env, remote Remote, r Rounds, dir, path string, co compare.Options, next func(*compare.Tables, []string, int) []engine.Case) (*compare.Tables, []string, *session.Recorded, int, error) {
	seed := r.Engine.Seed
	var paths []string
	rounds := 0
	for b := 1; ; b++ {
		r.Engine.Seed = seed + uint64(b-1)<<20
		r.Dir = fmt.Sprintf("%s-%d", dir, b)
		ts, all, rec, err := Remotely(ctx, env, remote, r, paths, path, co)
		if err != nil {
			return ts, paths, rec, rounds, err
		}
		paths = all
		rounds += r.Engine.Forks
		if rec.Failed > 0 {
			return ts, paths, rec, rounds, nil
		}
		if r.Cases = next(ts, paths, rounds); len(r.Cases) == 0 {
			return ts, paths, rec, rounds, nil
		}
	}
}

// Remotely measures r on remote and decides its rows together with the
// files of earlier batches of the same comparison (their paths): each
// machine's files of every batch are one file, a stratum (a machine's
// pairs are one sample of its noise however many batches they came in),
// written to the directory "machines" beside path, and the keys in which
// machines of a class differ are ignored (compare.HostKeys). Every
// machine's file is written one after another to path. It returns the
// tables, the paths of every batch's files so far, and what was written
// (Failed counts the failed forks the files name).
func Remotely(ctx context.Context, env *session.Env, remote Remote, r Rounds, earlier []string, path string, co compare.Options) (*compare.Tables, []string, *session.Recorded, error) {
	paths, err := remote.Measure(ctx, env, r)
	if err != nil {
		return nil, nil, nil, err
	}
	paths = append(slices.Clone(earlier), paths...)
	machines, data, err := byMachine(paths, filepath.Join(filepath.Dir(path), "machines"))
	if err != nil {
		return nil, nil, nil, session.FailedError{Msg: err.Error()}
	}
	rec := &session.Recorded{Path: path, Data: data}
	rec.Failed = bytes.Count(rec.Data, []byte("\n"+result.FailedMarker))
	co.Ignore = compare.HostKeys
	ts, err := compare.Build(machines, co)
	if err != nil {
		return nil, nil, nil, session.FailedError{Msg: err.Error()}
	}
	if _, err := session.ReplaceFile(rec.Path, rec.Data); err != nil {
		return ts, paths, rec, session.FailedError{Msg: err.Error()}
	}
	env.Say("%d machine(s) measured; their files, one after another, are %s", len(machines), rec.Path)
	return ts, paths, rec, nil
}

// byMachine joins the files of one machine (one base name, in whatever
// batch directory) into dir/<name>, in the order given, and returns
// their paths, first seen first, and all of them one after another.
// One batch's files are returned as they are.
func byMachine(paths []string, dir string) ([]string, []byte, error) {
	var order []string
	by := map[string][]string{}
	for _, p := range paths {
		name := filepath.Base(p)
		if _, ok := by[name]; !ok {
			order = append(order, name)
		}
		by[name] = append(by[name], p)
	}
	var out []string
	var all []byte
	for _, name := range order {
		var joined []byte
		for _, p := range by[name] {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, nil, err
			}
			joined = append(joined, data...)
		}
		all = append(all, joined...)
		p := by[name][0]
		if len(by[name]) > 1 {
			p = filepath.Join(dir, name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, nil, err
			}
			if _, err := session.ReplaceFile(p, joined); err != nil {
				return nil, nil, err
			}
		}
		out = append(out, p)
	}
	return out, all, nil
}

// ReadRuns reads the RunsFile a Remote wrote in dir: nil, and no error,
// when it wrote none.
func ReadRuns(dir string) ([]*result.Run, error) {
	path := filepath.Join(dir, RunsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []*result.Run
	if err := json.Unmarshal(data, &runs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return runs, nil
}
