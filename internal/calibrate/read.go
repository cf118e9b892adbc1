package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// ReadRuns reads the raw results of an earlier calibrate run (its
// aa.txt) back into the two sides' runs, for calibrate --from to report
// on again: the cases of each side in their order in the file (side A's
// i-th against side B's i-th), each fork's measured scores by the fork
// marker of its lines, and the header's machine facts. The machine time a
// round took is the file's own record of the run's length, else the
// RoundSeconds of the calibration.json beside it (a file from before that
// record), else 0.
func ReadRuns(path string) (runs []*result.Run, h report.Header, roundSeconds float64, err error) {
	if err := compare.CheckResultsFile(path); err != nil {
		return nil, h, 0, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, h, 0, err
	}
	data = blankLongComments(data)
	markers := result.ForkMarkers(data)
	r := benchfmt.NewReader(bytes.NewReader(data), path)
	sides := map[string]*result.Run{}
	var order []string
	byName := map[*result.Run]map[string]*result.CaseResult{}
	for r.Scan() {
		rec, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		side := rec.GetConfig("toolchain")
		run := sides[side]
		if run == nil {
			run = &result.Run{Side: side}
			sides[side], byName[run] = run, map[string]*result.CaseResult{}
			order = append(order, side)
			h.MachineID, h.EnvID, h.HostPinned = rec.GetConfig("machine-id"), rec.GetConfig("env-id"), rec.GetConfig("host-pinned")
		}
		name := "Benchmark" + result.TrimProcs(string(rec.Name)) // benchfmt drops the prefix
		cr := byName[run][name]
		if cr == nil {
			cr = &result.CaseResult{Case: result.Case{Benchmark: name}, Mode: result.AverageTime}
			byName[run][name] = cr
			run.Cases = append(run.Cases, cr)
		}
		_, line := rec.Pos()
		key, ok := markers[line]
		if !ok || len(rec.Values) == 0 || rec.Values[0].Unit != "sec/op" {
			continue // a per-op line of a group, or not a time
		}
		cr.Iterations = append(cr.Iterations, result.Iteration{Fork: result.ForkOf(key), Total: result.OpStats{NsPerOp: rec.Values[0].Value * 1e9}})
	}
	if err := r.Err(); err != nil {
		return nil, h, 0, err
	}
	if len(order) != 2 || len(sides[order[0]].Cases) != len(sides[order[1]].Cases) {
		return nil, h, 0, fmt.Errorf("%s: not a calibration's results: want two sides (toolchain A and B) with as many cases each", path)
	}
	if m := regexp.MustCompile(`(?m)^# benchctl: the run took ([0-9.]+) s`).FindSubmatch(data); m != nil {
		took, _ := strconv.ParseFloat(string(m[1]), 64)
		if rounds := roundsOf(sides[order[0]]); rounds > 0 {
			roundSeconds = took / float64(rounds)
		}
	} else if js, err := os.ReadFile(filepath.Join(filepath.Dir(path), "calibration.json")); err == nil {
		var old struct{ RoundSeconds float64 }
		if json.Unmarshal(js, &old) == nil {
			roundSeconds = old.RoundSeconds
		}
	}
	return []*result.Run{sides[order[0]], sides[order[1]]}, h, roundSeconds, nil
}

// roundsOf is the most forks a case of run has: its rounds.
func roundsOf(run *result.Run) int {
	n := 0
	for _, cr := range run.Cases {
		n = max(n, len(cr.ForkScores()))
	}
	return n
}

// blankLongComments empties every comment line of data too long for
// benchfmt's reader (64 KiB), keeping the line so that the results keep
// their line numbers: calibrate wrote its fork order on one such line
// before it split it.
func blankLongComments(data []byte) []byte {
	const longest = 64<<10 - 1
	var out []byte // nil until a line is blanked: files written since need no copy
	off := 0
	for line := range bytes.Lines(data) {
		switch {
		case len(line) > longest && line[0] == '#':
			if out == nil {
				out = append([]byte(nil), data[:off]...)
			}
			out = append(out, "#\n"...)
		case out != nil:
			out = append(out, line...)
		}
		off += len(line)
	}
	if out == nil {
		return data
	}
	return out
}
