package compare

import (
	"math"

	"golang.org/x/perf/benchproc"
)

// JSONSchema names the layout of [Tables.Verdicts]: a change to its keys
// or their meaning changes it.
const JSONSchema = "benchctl-verdicts/2"

// Verdicts is the machine-readable form of the tables: every row of every
// unit, each column's summary, and each column after the first decided
// against it. Keys are stable within a JSONSchema; a number that has no
// finite value (an interval open for lack of samples) is null.
type Verdicts struct {
	Schema   string       `json:"schema"`
	Headline string       `json:"headline"`
	Warnings []string     `json:"warnings"`
	Rows     []VerdictRow `json:"rows"`
	Tally    Tally        `json:"tally"`
}

// VerdictRow is one benchmark of one unit in one column.
type VerdictRow struct {
	Config string `json:"config"`
	Unit   string `json:"unit"`
	// Benchmark is its name as the tables show it (Table.RowName): go
	// test's -N suffix is left out when every row of the unit has the same
	// one, and GOMAXPROCS is then that N (else 0, omitted).
	Benchmark  string `json:"benchmark"`
	GOMAXPROCS int    `json:"gomaxprocs,omitempty"`
	Column     string `json:"column"`
	// Center is the median of the samples (one per fork, or per result
	// line); Min and Max the extremes of the result lines; N the samples.
	Center float64  `json:"center"`
	Min    *float64 `json:"min"`
	Max    *float64 `json:"max"`
	N      int      `json:"n"`
	// Against is the baseline column this one was decided against (""
	// in the baseline column itself, which has no verdict).
	Against string         `json:"against,omitempty"`
	Change  *VerdictChange `json:"change,omitempty"`
	// Verdict is "changed", "same" or "unknown"; Error says why a column
	// after the first has no verdict.
	Verdict string `json:"verdict,omitempty"`
	Error   string `json:"error,omitempty"`
}

// VerdictChange is a column's change against the baseline.
type VerdictChange struct {
	// Ratio is experiment/baseline; Lo and Hi its interval (a confidence
	// sequence when Sequential).
	Ratio      float64  `json:"ratio"`
	Lo         *float64 `json:"lo"`
	Hi         *float64 `json:"hi"`
	Paired     bool     `json:"paired"`
	Sequential bool     `json:"sequential"`
	Test       string   `json:"test"`
	N          int      `json:"n"`
	P          *float64 `json:"p"`
	Q          *float64 `json:"q"`
	// MDE is the smallest change these samples could detect (0.03: 3 %).
	MDE *float64 `json:"mde"`
}

// finite is v, or nil when it has no finite value.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Verdicts returns the tables' rows and verdicts, the columns named by
// names as in [Tables.Markdown].
func (ts *Tables) Verdicts(names []string) Verdicts {
	v := Verdicts{Schema: JSONSchema, Headline: ts.Headline(), Warnings: ts.sortedWarnings(), Rows: []VerdictRow{}, Tally: ts.Tally()}
	if v.Warnings == nil {
		v.Warnings = []string{}
	}
	ts.eachCell(names, func(t *Table, row benchproc.Key, i int, cols []string, c *Cell) {
		r := VerdictRow{Config: t.Config, Unit: t.Unit, Benchmark: t.RowName(row), GOMAXPROCS: t.GOMAXPROCS(), Column: cols[i],
			Center: c.Center, Min: finite(c.Min), Max: finite(c.Max), N: len(c.Values)}
		if i > 0 {
			r.Against = cols[0]
			switch d := t.Decision(row, t.Cols[i]); {
			case d == nil:
				r.Error = "no baseline in this row"
			case d.Err != nil:
				r.Error = d.Err.Error()
			default:
				ch := d.Change
				r.Verdict = d.Verdict.String()
				r.Change = &VerdictChange{Ratio: ch.Ratio, Lo: finite(ch.Lo), Hi: finite(ch.Hi), Paired: ch.Paired, Sequential: ch.Sequential,
					Test: ch.Test, N: ch.N, P: finite(ch.P), Q: finite(d.Q), MDE: finite(ch.MDE)}
			}
		}
		v.Rows = append(v.Rows, r)
	})
	return v
}
