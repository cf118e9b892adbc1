package fleet

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// mergeRuns joins the jobs' result.Runs into one Run a side
// (result.JoinRuns): each case's forks from every job, in job order,
// renumbered by the job's first round (a job's rounds First to
// First+Count-1 ran as its forks 1 to Count), so a case's fork n is its
// round n on whichever machine it ran. It returns nil when a job kept no
// runs (an agent that does not keep them). results[i] is jobs[i]'s.
func mergeRuns(jobs []Rounds, results []Result) ([]*result.Run, error) {
	var out []*result.Run
	for i, r := range results {
		if r.Runs == nil {
			return nil, nil
		}
		var runs []*result.Run
		if err := json.Unmarshal(r.Runs, &runs); err != nil {
			return nil, fmt.Errorf("job %d's runs cannot be read: %w", r.JobID, err)
		}
		first := jobs[i].First
		var err error
		if out, err = result.JoinRuns(out, runs, func(*result.CaseResult) int { return first - 1 }); err != nil {
			return nil, fmt.Errorf("job %d: %w", r.JobID, err)
		}
	}
	return out, nil
}

// writeRuns writes runs, as JSON, to dir's ab.RunsFile.
func writeRuns(dir string, runs []*result.Run) error {
	data, err := json.Marshal(runs)
	if err != nil {
		return err
	}
	_, err = session.ReplaceFile(filepath.Join(dir, ab.RunsFile), data)
	return err
}
