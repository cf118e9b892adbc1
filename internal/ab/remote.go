package ab

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ledgerbench/ledgerbench/harness/compare"
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

// Fleets connects to the fleet whose database is url, to measure on its
// agents of class; the caller closes the Closer. It is set by the
// package that links the fleet's queue (internal/fleetcmd, imported by
// the programs that run fleets, as database/sql's drivers register
// themselves) and nil in a program without it.
var Fleets func(ctx context.Context, url, class string) (Remote, io.Closer, error)

// Rounds are the rounds an A/B asks of a Remote: Engine.Forks rounds
// from Engine.Seed of Cases on the two Sides (programs built here).
type Rounds struct {
	Engine engine.Options
	Cases  []engine.Case
	Sides  []engine.Side
	Revs   []revision.Revision
	Dir    string
}

// checkRemote refuses what a fleet cannot run yet: go test packages
// (they run in their package's directory) and the rules that add rounds
// by looking at them.
func (o *Options) checkRemote() error {
	switch e := o.Engine; {
	case o.Remote == nil:
		return nil
	case len(o.Packages) > 0:
		return session.Input("{Fleet} runs benchmark programs; a package's go test benchmarks need its directory on the agent, which a fleet does not ship yet")
	case e.UntilDecided || e.Detect > 0 || e.Precision > 0 || e.Budgeted():
		return session.Input("{Fleet} runs a fixed number of rounds: {UntilDecided}, {Detect}, {Precision} and {Budget} run on one machine")
	case len(e.Profiles) > 0:
		return session.Input("{Fleet} measures time: {Profiles} runs on one machine")
	}
	return nil
}

// failedPrefix starts the comment a results file gives each failed fork.
const failedPrefix = "# benchctl: FAILED "

// measureRemote is measure on o.Remote: the machines' files, one after
// another, are file in o.Out, and the rows are decided with each
// machine's pairs as a stratum.
func measureRemote(ctx context.Context, s *session.Session, o Options, set *Sides, seed uint64, file string, co compare.Options) (*compare.Tables, *session.Recorded, error) {
	eo := o.Engine
	eo.Seed = seed
	dir := filepath.Join(o.Out, strings.TrimSuffix(file, ".txt")+"-machines")
	paths, err := o.Remote.Measure(ctx, s.Env, Rounds{Engine: eo, Cases: set.Cases, Sides: set.Sides, Revs: set.Revs, Dir: dir})
	if err != nil {
		return nil, nil, err
	}
	r := &session.Recorded{Path: filepath.Join(o.Out, file)}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, session.FailedError{Msg: err.Error()}
		}
		r.Data = append(r.Data, data...)
	}
	r.Failed = bytes.Count(r.Data, []byte("\n"+failedPrefix))
	co.Ignore = compare.HostKeys
	ts, err := compare.Build(paths, co)
	if err != nil {
		return nil, nil, session.FailedError{Msg: err.Error()}
	}
	if _, err := session.ReplaceFile(r.Path, r.Data); err != nil {
		return ts, r, session.FailedError{Msg: err.Error()}
	}
	s.Env.Say("%d machine(s) measured; their files, one after another, are %s", len(paths), r.Path)
	return ts, r, nil
}
