package benchctl

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/internal/ab"
)

// abVerdicts is ab --json's answer on stdout: the verdicts of
// compare.Verdicts (schema compare.JSONSchema) with the two revisions,
// where the results went, and the regressions that fail the command.
type abVerdicts struct {
	compare.Verdicts
	Command     string        `json:"command"`
	Baseline    jsonRevision  `json:"baseline"`
	Experiment  jsonRevision  `json:"experiment"`
	Out         string        `json:"out"`
	File        string        `json:"file"`
	Confirmed   bool          `json:"confirmed"`
	Regressions []jsonVerdict `json:"regressions"`
	// Waived are the regressions --policy keeps from failing.
	Waived []jsonVerdict `json:"waived"`
}

type jsonRevision struct {
	Rev    string `json:"rev"`
	Commit string `json:"commit"`
}

// jsonVerdict names a row of the verdicts (a regression).
type jsonVerdict struct {
	Unit      string  `json:"unit"`
	Benchmark string  `json:"benchmark"`
	Column    string  `json:"column"`
	Ratio     float64 `json:"ratio"`
	Why       string  `json:"why,omitempty"`
}

// writeJSON writes v indented, one object.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// abJSON writes an A/B result as ab --json's answer, the columns named
// as in its table.
func abJSON(w io.Writer, res *ab.Result, names []string) error {
	v := abVerdicts{Verdicts: res.Tables.Verdicts(names), Command: "ab", Out: res.Out, File: res.File, Confirmed: res.Confirmed,
		Regressions: []jsonVerdict{}, Waived: []jsonVerdict{}}
	if len(res.Revs) == 2 {
		v.Baseline = jsonRevision{Rev: res.Revs[0].Rev, Commit: res.Revs[0].Commit}
		v.Experiment = jsonRevision{Rev: res.Revs[1].Rev, Commit: res.Revs[1].Commit}
	}
	for _, r := range res.Regressions {
		v.Regressions = append(v.Regressions, jsonVerdict{Unit: r.Unit, Benchmark: r.Benchmark, Column: r.Column, Ratio: r.Ratio})
	}
	for _, w := range res.Waived {
		v.Waived = append(v.Waived, jsonVerdict{Unit: w.Unit, Benchmark: w.Benchmark, Column: w.Column, Ratio: w.Ratio, Why: w.Why})
	}
	if err := writeJSON(w, v); err != nil {
		return fmt.Errorf("writing the verdicts: %w", err)
	}
	return nil
}
