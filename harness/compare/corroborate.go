package compare

import (
	"fmt"
	"math"
	"strings"

	"golang.org/x/perf/benchproc"

	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// Corroboration says whether what a time or throughput row's change is
// made of moved with it: its instructions per op (counted exactly by
// callgrind, with --prof instructions) and its allocations per op. A time
// change whose instructions and allocations stayed put is "time only": a
// change of the host, the memory layout or the caches rather than of the
// work done; one they move with is confirmed.
type Corroboration struct {
	// Instructions and Allocs are the decisions of the same row and column
	// in the instructions/op and allocs/op tables, nil when there is none.
	Instructions, Allocs *Decision
	Label                string // "confirmed", "time only", or "" (not a change, or nothing to say)
}

// Corroboration returns the corroboration of a time or throughput cell,
// nil for another unit or a cell without a decision.
func (t *Table) Corroboration(row, col benchproc.Key) *Corroboration {
	return t.corroborations[[2]benchproc.Key{row, col}]
}

// corroborate finds, for every decision of a time or throughput table,
// the instructions/op and allocs/op decisions of the same row and column
// in the tables of the same configuration, and labels the changes.
func (ts *Tables) corroborate() {
	type at struct {
		config, unit string
		row, col     benchproc.Key
	}
	byCell := map[at]*Decision{}
	for _, t := range ts.Tables {
		for key, d := range t.decisions {
			byCell[at{t.Config, t.Unit, key[0], key[1]}] = d
		}
	}
	margin := math.Max(ts.Options.MinChange/100, 0.005)
	for _, t := range ts.Tables {
		if !timeUnit(t.Unit) {
			continue
		}
		t.corroborations = map[[2]benchproc.Key]*Corroboration{}
		for key, d := range t.decisions {
			c := &Corroboration{
				Instructions: byCell[at{t.Config, "instructions/op", key[0], key[1]}],
				Allocs:       byCell[at{t.Config, "allocs/op", key[0], key[1]}],
			}
			if c.Instructions == nil && c.Allocs == nil {
				continue
			}
			t.corroborations[key] = c
			if d.Verdict != verdict.Changed {
				continue
			}
			// A slower time (or lower throughput) is confirmed by more
			// instructions or allocations, a faster one by fewer.
			more := d.Worse
			confirms := func(x *Decision) bool {
				return x != nil && x.Err == nil && math.Abs(x.Change.Ratio-1) >= margin && (x.Change.Ratio > 1) == more &&
					(x.Verdict == verdict.Changed || x.Change.Lo == x.Change.Hi)
			}
			still := func(x *Decision) bool {
				return x == nil || (x.Err == nil && math.Abs(x.Change.Ratio-1) < margin)
			}
			switch {
			case confirms(c.Instructions) || confirms(c.Allocs):
				c.Label = "confirmed"
			case c.Instructions != nil && still(c.Instructions) && still(c.Allocs):
				c.Label = "time only"
			}
		}
	}
}

func timeUnit(u string) bool { return u == "sec/op" || u == "ops/s" }

// text is the cell of the table's "Moved with it" column.
func (c *Corroboration) text() string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, x := range []struct {
		name string
		d    *Decision
	}{{"instructions", c.Instructions}, {"allocs", c.Allocs}} {
		switch {
		case x.d == nil:
		case x.d.Err != nil:
			parts = append(parts, x.name+" ?")
		default:
			parts = append(parts, fmt.Sprintf("%s %s %%", x.name, pctNum(x.d.Change.Ratio)))
		}
	}
	s := strings.Join(parts, ", ")
	switch c.Label {
	case "confirmed":
		s += ": confirmed"
	case "time only":
		s += ": **time only**"
	}
	return s
}
