package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// sideKey is the parameter whose values are compared side by side.
const sideKey = "impl"

// profileSummaries summarizes every profiling fork of run. A fork that
// failed or a profile that does not parse becomes a note naming its path.
func profileSummaries(run *result.Run) []profile.CaseProfiles {
	var out []profile.CaseProfiles
	for _, cr := range run.Cases {
		if len(cr.Profiles) == 0 {
			continue
		}
		cp := profile.CaseProfiles{Name: cr.Case.Name(), Group: cr.Case.Name()}
		if v, ok := cr.Case.Params.Get(sideKey); ok {
			cp.Side = sideKey + "=" + v
			cp.Group = strings.Replace(cp.Name, "/"+cp.Side, "", 1)
		}
		for _, pr := range cr.Profiles {
			switch {
			case pr.Err != nil:
				cp.Notes = append(cp.Notes, fmt.Sprintf("%s: failed: %v", pr.Kind, pr.Err))
			case pr.Kind == string(profile.Instructions):
				cp.InstructionsPerOp = pr.InstructionsPerOp
			case pr.Kind == string(profile.Perf):
				cp.Counters = pr.Counters
			default:
				s, err := profile.Summarize(pr.Path, profile.Kind(pr.Kind), pr.Ops)
				if err != nil {
					cp.Notes = append(cp.Notes, fmt.Sprintf("%s: cannot summarize %s: %v", pr.Kind, pr.Path, err))
					continue
				}
				if pr.Kind == string(profile.OffCPU) {
					cp.Notes = append(cp.Notes, "offcpu: fgprof samples every goroutine at 99 Hz; it perturbs timing and its fork's numbers are not results")
				}
				cp.Summaries = append(cp.Summaries, s)
			}
		}
		out = append(out, cp)
	}
	return out
}

// WriteProfileSummary writes DIR/profiles/summary.md and returns its text.
func WriteProfileSummary(dir string, run *result.Run) (string, error) {
	var b bytes.Buffer
	for _, n := range run.ProfileNotes {
		fmt.Fprintf(&b, "> %s\n\n", n)
	}
	if err := profile.WriteMarkdown(&b, profileSummaries(run)); err != nil {
		return "", err
	}
	return b.String(), WriteFileAtomic(filepath.Join(dir, "summary.md"), b.Bytes())
}
