package bisect

import (
	"context"
	"hash/fnv"
	"path/filepath"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// remoteStep is the rest of a step begun at start whose sides are built:
// its A/B on the fleet, and its explanation.
func (bs *bisector) remoteStep(ctx context.Context, sr *stepRun, set *ab.Sides, add adding, start time.Time) (*stepRun, error) {
	o := bs.o
	o.Budget = bs.opts.Budget
	if err := bs.measureRemote(ctx, sr, set, o, add); err != nil {
		return nil, err
	}
	sr.took = time.Since(start)
	return sr, bs.explainStep(ctx, sr, add)
}

// measureRemote is a step's A/B on Options.Remote (a fleet): batches of
// the step's rounds (ab.Sequentially: Forks each, a seed of the step's
// and the batch's own), decided after every batch with all before it by
// the anytime-valid test (rounds were added by looking), until what add
// asks is met, the step has spent its budget or MaxForks rounds were
// measured.
func (bs *bisector) measureRemote(ctx context.Context, sr *stepRun, set *ab.Sides, o engine.Options, add adding) error {
	co := ab.Verdicts(bs.opts.Alpha, bs.opts.MinChange, true)
	batch := o
	batch.Precision, batch.UntilDecided, batch.Detect, batch.Budget = 0, false, 0, 0
	start := time.Now()
	// Every A/B of the bisection measures afresh: the ends measured again
	// and a commit's second A/B are other comparisons than the first,
	// not the same one taken back from the fleet.
	h := fnv.New64a()
	h.Write([]byte(filepath.Base(sr.dir)))
	batch.Seed = o.Seed + h.Sum64()
	r := ab.Rounds{Engine: batch, Cases: set.Cases, Sides: set.Sides, Revs: set.Revs}
	next := func(ts *compare.Tables, _ []string, rounds int) []engine.Case {
		if bs.met(ts, set, add) || rounds+batch.Forks > engine.MaxForks || o.Budget > 0 && time.Since(start) >= o.Budget {
			return nil
		}
		return set.Cases
	}
	ts, _, rec, rounds, err := ab.Sequentially(ctx, bs.env, bs.opts.Remote, r, filepath.Join(sr.dir, "batch"), filepath.Join(sr.dir, "ab.txt"), co, next)
	if err != nil {
		return err
	}
	if rec.Failed > 0 {
		return bisectError("%d fork(s) of the A/B of %s against %s failed; its results are in %s", rec.Failed, revision.Short(set.Revs[0].Commit), revision.Short(set.Revs[1].Commit), rec.Path)
	}
	sr.ts, sr.m, sr.rounds = ts, rec, sr.rounds+rounds
	return nil
}

// met says whether a step's tables are what add asks: every row decided,
// or the followed row's interval within ±add.precision (of the log).
func (bs *bisector) met(ts *compare.Tables, set *ab.Sides, add adding) bool {
	if add.decided {
		for _, c := range set.Cases {
			if !ts.Decided(c.Name()) {
				return false
			}
		}
	}
	if add.precision > 0 && bs.track != nil {
		d := bs.decision(ts)
		return d != nil && engine.HalfWidth(d.Change) <= add.precision
	}
	return true
}

// checkRemote refuses probes at once without a fleet.
func (o *Options) checkRemote() error {
	switch {
	case o.Parallel < 0:
		return session.Input("{Parallel} %d: the commits probed at once, at least 1", o.Parallel)
	case o.Remote == nil && o.Parallel > 1:
		return session.Input("{Parallel} %d probes at once need a fleet: on one machine they would measure each other", o.Parallel)
	}
	return nil
}
