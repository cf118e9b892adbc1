package ab

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
	"github.com/ledgerbench/ledgerbench/internal/axis"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// RunRemotely is a run's measurement on remote (run --fleet): r's rounds
// (one side) at once (Remotely, r.Dir the machines' files, out/bench.txt
// all of them), or, with r.Engine.UntilDecided, in batches into
// out/batch-N (RunUntilDecided) until wait decides every row or
// r.Engine.Budget is spent; then Undecided says what stayed undecided.
// The machines' runs are read back for bench.json; a failure to read
// them is said, not the run's.
func RunRemotely(ctx context.Context, env *session.Env, remote Remote, r Rounds, out string, wait *axis.Wait) (*Batches, error) {
	bench := filepath.Join(out, "bench.txt")
	if !r.Engine.UntilDecided {
		ts, paths, rec, err := Remotely(ctx, env, remote, r, nil, bench, compare.Options{})
		b := &Batches{Tables: ts, Paths: paths, Rec: rec, Rounds: r.Engine.Forks}
		if err != nil {
			return b, err
		}
		if b.Runs, err = ReadRuns(r.Dir); err != nil {
			env.Say("the machines' runs (for bench.json and the JMH table) are left out: %v", err)
		}
		return b, nil
	}
	start := time.Now()
	batch := r
	batch.Engine.UntilDecided, batch.Engine.Budget = false, 0
	b, err := RunUntilDecided(ctx, env, remote, batch, r.Engine.Budget, filepath.Join(out, "batch"), bench, wait.DecideOf)
	if err == nil {
		b.Took = time.Since(start)
	}
	return b, err
}

// Undecided are the cases wait decided over b's files, and, for each
// compared case whose row is not decided, its name and why.
func Undecided(wait *axis.Wait, b *Batches, cases []result.Case) (decided int, undecided []string, err error) {
	look, err := wait.LookOf(b.Paths)
	if err != nil {
		return 0, nil, err
	}
	decided, undecided = wait.Count(look, cases, func(string) int { return b.Rounds })
	return decided, undecided, nil
}

// WriteJMH writes out/bench.json (JMH's JSON) and out/table.txt (JMH's
// table) of the runs a fleet run's machines measured (Batches.Runs, every
// machine's forks of a case joined), as a run on one machine writes
// them, with the header h; it returns the table.
func WriteJMH(out string, h report.Header, runs []*result.Run) ([]byte, error) {
	if len(runs) == 0 {
		return nil, errors.New("the machines kept no runs")
	}
	var js, table bytes.Buffer
	if err := report.WriteJMH(&js, h, runs[0]); err != nil {
		return nil, err
	}
	if err := report.WriteTable(&table, runs[0]); err != nil {
		return nil, err
	}
	if err := atomicfile.Replace(filepath.Join(out, "bench.json"), js.Bytes()); err != nil {
		return nil, err
	}
	return table.Bytes(), atomicfile.Replace(filepath.Join(out, "table.txt"), table.Bytes())
}
