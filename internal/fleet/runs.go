package fleet

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// mergeRuns joins the jobs' result.Runs into one Run a side: each case's
// forks from every job, in job order, renumbered by the job's first round
// (a job's rounds First to First+Count-1 ran as its forks 1 to Count),
// so a case's fork n is its round n on whichever machine it ran. It
// returns nil when a job kept no runs (an agent that does not keep
// them). results[i] is jobs[i]'s.
func mergeRuns(jobs []Rounds, results []Result) ([]*result.Run, error) {
	var out []*result.Run
	index := map[[2]string]*result.CaseResult{} // side, case → merged
	for i, r := range results {
		if r.Runs == nil {
			return nil, nil
		}
		var runs []*result.Run
		if err := json.Unmarshal(r.Runs, &runs); err != nil {
			return nil, fmt.Errorf("job %d's runs cannot be read: %w", r.JobID, err)
		}
		if out == nil {
			for _, run := range runs {
				m := *run
				m.Cases, m.Order, m.Config.CPUs = nil, nil, nil // each agent's own CPUs; Order is of one job's rounds
				out = append(out, &m)
			}
		}
		if len(runs) != len(out) {
			return nil, fmt.Errorf("job %d has %d sides' runs, job %d %d", r.JobID, len(runs), results[0].JobID, len(out))
		}
		shift := jobs[i].First - 1
		for s, run := range runs {
			m := out[s]
			m.Config.Forks = max(m.Config.Forks, shift+run.Config.Forks)
			if run.Start.Before(m.Start) {
				m.Start = run.Start
			}
			if run.End.After(m.End) {
				m.End = run.End
			}
			for _, c := range run.Cases {
				c.Renumber(shift)
				key := [2]string{run.Side, c.Case.Name()}
				if have, ok := index[key]; ok {
					have.Join(c)
					continue
				}
				index[key] = c
				m.Cases = append(m.Cases, c)
			}
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
