package result

import (
	"bufio"
	"bytes"
	"slices"
	"strconv"
)

// ForkMarker starts the telemetry comment that benchctl writes on the
// line after each measured result line of bench.txt and of A/B and
// nightly files: "# benchctl: fork=2 iter=0 …". It marks the fork (the
// process) the result came from, which benchstat ignores and compare
// reads with [ForkMarkers].
const ForkMarker = "# benchctl: fork="

// ForkMarkers maps the 1-based line number of each result line of a
// Go benchmark-format file to the fork it came from: the fork of the
// marker on the next line, or, for a result line without one (the per-op
// lines of a group, which follow their op=all line's marker), the fork of
// the last marker before it. Lines before any marker, and files of other
// tools, have none: the map is empty.
func ForkMarkers(data []byte) map[int]int {
	out := map[int]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var line, last, pending int // pending: a result line waiting for its marker
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if rest, ok := bytes.CutPrefix(text, []byte(ForkMarker)); ok {
			end := bytes.IndexByte(rest, ' ')
			if end < 0 {
				end = len(rest)
			}
			if f, err := strconv.Atoi(string(rest[:end])); err == nil && f > 0 {
				last = f
				if pending > 0 {
					out[pending] = f
					pending = 0
				}
			}
			continue
		}
		if pending > 0 && last > 0 {
			out[pending] = last
		}
		pending = 0
		if bytes.HasPrefix(text, []byte("Benchmark")) {
			pending = line
		}
	}
	if pending > 0 && last > 0 {
		out[pending] = last
	}
	return out
}

// GroupByFork groups values by the fork of each (forks[i], as
// ForkMarkers gives it), in fork order. It returns nil when a value has no
// fork (0) or the lengths differ: such values come from a file without
// markers and are samples one by one.
func GroupByFork(vals []float64, forks []int) [][]float64 {
	if len(forks) != len(vals) || slices.Contains(forks, 0) {
		return nil
	}
	by := map[int][]float64{}
	var order []int
	for i, f := range forks {
		if _, ok := by[f]; !ok {
			order = append(order, f)
		}
		by[f] = append(by[f], vals[i])
	}
	slices.Sort(order)
	out := make([][]float64, 0, len(order))
	for _, f := range order {
		out = append(out, by[f])
	}
	return out
}
