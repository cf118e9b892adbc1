package ab

import (
	"context"
	"errors"
	"fmt"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// OpenRepo is the repository of the source tree in dir ("" = the current
// directory).
func OpenRepo(dir string) (*revision.Repo, error) {
	repo, err := revision.Open(session.SourceDir(dir))
	if err != nil {
		return nil, session.RevisionError(err)
	}
	return repo, nil
}

// FindProgram locates the benchmark program to build per revision: the
// main package program names (--cmd), else the one this binary was built
// from.
func FindProgram(dir string, repo *revision.Repo, program string) (*revision.Program, error) {
	p, err := revision.FindProgram(session.SourceDir(dir), repo.Root, program)
	switch {
	case errors.Is(err, revision.ErrUnknownProgram):
		return nil, session.Input("%w: name it with {Program} ./path/to/main", err)
	case err != nil && program != "":
		return nil, session.Input("{Program} %w", err)
	case err != nil:
		return nil, session.RevisionError(err)
	}
	return p, nil
}

// ResolvePair resolves the baseline and experiment revisions.
func ResolvePair(repo *revision.Repo, base, head string, allowDirty bool) ([2]revision.Revision, error) {
	revs, err := repo.Pair(base, head, allowDirty)
	if errors.Is(err, revision.ErrDirtyHead) {
		return revs, session.Input("{Head} %w: commit them, measure the working tree with {Head} ., or pass {AllowDirty}", err)
	}
	if err != nil {
		return revs, session.RevisionError(err)
	}
	return revs, nil
}

// NewWorkspace is a command's build directory for revisions, after
// removing the worktrees of an earlier command that was killed (the run
// lock is held, unless the session ignores it, so none is in use).
func NewWorkspace(s *session.Session, repo *revision.Repo, kind string) (*revision.Workspace, error) {
	if !s.IgnoresLock() {
		repo.RemoveStaleWorktrees()
	}
	ws, err := repo.NewWorkspace(kind, s.Env.Say)
	if err != nil {
		return nil, session.FailedError{Msg: err.Error()}
	}
	return ws, nil
}

// Sides is what a command built to run: its sides, the cases every side
// has, and the notes and broken packages of the builds.
type Sides struct {
	Sides         []engine.Side
	Cases         []engine.Case
	Revs          []revision.Revision
	Notes, Broken []string
	// HeadCases counts the selected benchmarks the experiment declares,
	// whether or not the baseline has them: 0 is a selection that
	// matches nothing at the experiment.
	HeadCases int
}

// BuildPair builds two revisions' sides in ws: the packages' test
// binaries when patterns are given, else the benchmark program prog (the
// experiment is self when it is this very binary). dir is the user's
// source tree, from which package patterns resolve.
func BuildPair(ctx context.Context, env *session.Env, ws *revision.Workspace, dir string, revs [2]revision.Revision, prog *revision.Program, self *revision.Built,
	cases []engine.Case, o engine.Options, patterns []string) (*Sides, error) {
	set := &Sides{Revs: revs[:]}
	if len(patterns) > 0 {
		tp, err := ws.BuildTestPair(ctx, session.SourceDir(dir), revs, session.TestSpec(o), patterns)
		if err != nil {
			return nil, session.RevisionError(err)
		}
		set.Sides, set.Cases, set.Notes, set.Broken, set.HeadCases = tp.Sides, tp.Cases, tp.Notes, tp.Broken, tp.HeadCases
	} else {
		head := self
		if head == nil {
			head = &revision.Built{Rev: revs[1]}
		}
		base, head, notes, err := ws.BuildBase(prog, revs[0], head, cases)
		if err != nil {
			return nil, session.FailedError{Msg: err.Error()}
		}
		set.Notes, set.Cases, set.HeadCases = notes, revision.Runnable(cases, base, head), len(revision.Runnable(cases, head))
		set.Sides = []engine.Side{{Name: "baseline", Launch: engine.Program{Executable: base.Bin}}, {Name: "experiment", Launch: engine.Program{Executable: head.Bin}}}
	}
	for _, n := range set.Notes {
		env.Say("%s", n)
	}
	return set, nil
}

// Mode says how the sides of an A/B run ran, and why.
func Mode(o engine.Options) string {
	if o.Duet {
		halves, _ := engine.DuetCPUs(o.CPUs)
		return fmt.Sprintf("mode: duet (--duet): each round ran both sides' forks at the same time, one on CPUs %v and one on CPUs %v (GOMAXPROCS=%d each), swapped every round; "+
			"each round's pair shares the host's noise, and what the sides share without splitting (caches, memory bandwidth) an A/A duet measures; "+
			"the times are those of a benchmark on %d CPU(s) beside another, not its usual ones: the change between the sides is what a duet measures", halves[0], halves[1], len(halves[0]), len(halves[0]))
	}
	return "mode: interleaved (the default; --duet runs both sides at once): each round ran one side's fork after the other's, in a seeded order; the rounds pair them"
}
