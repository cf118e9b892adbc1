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

// RunMarker starts the comment that opens each run benchctl writes ("#
// benchctl: made by `…` at …"): a file that holds several (concatenated
// runs) holds several sets of processes, each numbered from fork 1.
const RunMarker = "# benchctl: made by "

// FailedMarker starts the comment benchctl writes for each failed fork
// of a case ("# benchctl: FAILED …"): a file records as many failed forks
// as it has such lines.
const FailedMarker = "# benchctl: FAILED "

// forkSpan separates the fork keys of successive runs in one file, and
// fileSpan those of successive files (see [ForkKey]).
const (
	forkSpan = 1 << 20
	fileSpan = 1 << 40
)

// ForkKey is the key that identifies a fork of a comparison's files:
// fork (1-based) of the run-th run (see [RunMarker]) of the file-th file.
// Two processes never share one, however their files are combined.
func ForkKey(file, run, fork int) int { return file*fileSpan + run*forkSpan + fork }

// ForkOf is the fork number (1-based) of a fork key.
func ForkOf(key int) int { return key % forkSpan }

// FileOf is the file (0-based, in the order the files were given) of a
// fork key.
func FileOf(key int) int { return key / fileSpan }

// ForkMarkers maps the 1-based line number of each result line of a
// Go benchmark-format file to the fork it came from, as a [ForkKey] of
// file 0: the fork of the marker on the next line, or, for a result line
// without one (the per-op lines of a group, which follow their op=all
// line's marker), the fork of the last marker before it, within the run
// the last run marker opened. Lines before any marker, and files of other
// tools, have none: the map is empty. InFile moves the keys to another
// file's.
func ForkMarkers(data []byte) map[int]int {
	out := map[int]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var line, last, pending, run int // pending: a result line waiting for its marker
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if bytes.HasPrefix(text, []byte(RunMarker)) {
			if pending > 0 && last > 0 {
				out[pending] = last
			}
			run++
			last, pending = 0, 0
			continue
		}
		if rest, ok := bytes.CutPrefix(text, []byte(ForkMarker)); ok {
			end := bytes.IndexByte(rest, ' ')
			if end < 0 {
				end = len(rest)
			}
			if f, err := strconv.Atoi(string(rest[:end])); err == nil && f > 0 && f < forkSpan {
				last = ForkKey(0, run, f)
				if pending > 0 {
					out[pending] = last
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

// InFile is markers (of ForkMarkers) with their keys moved to the
// file-th file's, so forks of different files never share a key.
func InFile(markers map[int]int, file int) map[int]int {
	out := make(map[int]int, len(markers))
	for line, key := range markers {
		out[line] = key + file*fileSpan
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
