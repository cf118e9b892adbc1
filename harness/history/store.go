package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// NightlyPath is where a nightly run of commit on machine is recorded:
// DIR/nightly/<machine-id>/YYYY/MM/<stamp>_<commit>.txt.
func NightlyPath(dir, machineID string, t time.Time, commit string) string {
	t = t.UTC()
	if len(commit) > 12 {
		commit = commit[:12]
	}
	return filepath.Join(dir, "nightly", machineID, t.Format("2006"), t.Format("01"), t.Format("20060102T150405Z")+"_"+commit+".txt")
}

// Runs lists the nightly result files of a machine, oldest first (the
// stamp leads the file name).
func Runs(dir, machineID string) ([]string, error) {
	root := filepath.Join(dir, "nightly", machineID)
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".txt") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return filepath.Base(out[i]) < filepath.Base(out[j]) })
	return out, nil
}

// WriteMachine records a machine's fingerprint facts as
// DIR/machines/<machine-id>.json.
func WriteMachine(dir, machineID string, facts any) error {
	b, err := json.MarshalIndent(facts, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(dir, "machines", machineID+".json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, append(b, '\n'), 0o644)
}

// Point is one run's value of one benchmark: the median of its samples,
// one per fork when the file marks forks (N counts them).
type Point struct {
	File   string
	Commit string
	EnvID  string
	Value  float64
	N      int
	// Lo and Hi are the lowest and highest of the forks' values whose
	// median is Value (0 when not known: a point read from elsewhere).
	Lo, Hi float64
}

// Series is one benchmark's values over the runs of one machine.
type Series struct {
	Pkg, Benchmark, Unit string
	HigherIsBetter       bool
	Points               []Point
}

// Load reads result files (oldest first) into one series per benchmark
// and unit of time or throughput. In an A/B file only the experiment side
// counts. Nothing unreadable is skipped silently: a file that cannot be
// read, a syntax error, a file whose reading stopped early (a line over
// the reader's limit), a file without results and a NaN or infinite value
// are each a warning naming the file; used lists the files that gave at
// least one point.
func Load(paths []string) (series []*Series, used []string, warnings []string) {
	return load(paths, nil)
}

// runNameRE matches the base name NightlyPath gives a run, with the -N
// suffix a run of the same second takes.
var runNameRE = regexp.MustCompile(`^\d{8}T\d{6}Z_[^/]*\.txt$`)

// LoadMachine is Load of one machine's runs (Runs of machineID): a file
// not named as nightly names a run, or holding results of another
// machine-id, is left out with a warning instead of counted.
func LoadMachine(paths []string, machineID string) (series []*Series, used []string, warnings []string) {
	return load(paths, func(p string, data []byte) string {
		if !runNameRE.MatchString(filepath.Base(p)) {
			return "not named as a nightly run (STAMP_COMMIT.txt)"
		}
		// The machine-id config lines, read as lines: FilePoints parses
		// the file once, after this.
		for line := range bytes.Lines(data) {
			if m, ok := bytes.CutPrefix(line, []byte("machine-id:")); ok {
				if m := string(bytes.TrimSpace(m)); m != "" && m != machineID {
					return fmt.Sprintf("results of machine-id %s, not %s", m, machineID)
				}
			}
		}
		return ""
	})
}

// load reads the runs at paths into series; keep, when set, names why a
// run is not one of the series' (or "").
func load(paths []string, keep func(path string, data []byte) string) (series []*Series, used []string, warnings []string) {
	byKey := map[string]*Series{}
	var order []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && !fi.Mode().IsRegular() {
			// A FIFO would block the read for ever, a device never end.
			warnings = append(warnings, p+": not a regular file: left out")
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		if keep != nil {
			if why := keep(p, data); why != "" {
				warnings = append(warnings, p+": "+why+": left out")
				continue
			}
		}
		pts, warn := FilePoints(p, data)
		warnings = append(warnings, warn...)
		if len(pts) == 0 {
			continue
		}
		used = append(used, p)
		for _, fp := range pts {
			// Keyed by name, as nightly files have always been read: a
			// file without a pkg line continues its series.
			k := fp.Benchmark + "\x00" + fp.Unit
			s := byKey[k]
			if s == nil {
				s = &Series{Pkg: fp.Pkg, Benchmark: fp.Benchmark, Unit: fp.Unit, HigherIsBetter: fp.HigherIsBetter}
				byKey[k] = s
				order = append(order, k)
			}
			s.Points = append(s.Points, fp.Point)
			if fp.Pkg != "" {
				s.Pkg = fp.Pkg
			}
		}
	}
	sort.Strings(order)
	series = make([]*Series, 0, len(order))
	for _, k := range order {
		series = append(series, byKey[k])
	}
	return series, used, warnings
}

// FilePoint is one file's point of one benchmark (of package Pkg, as the
// file's pkg configuration key names it) and unit.
type FilePoint struct {
	Pkg, Benchmark, Unit string
	HigherIsBetter       bool
	Point
}

// FilePoints reads one result file (named name in the points and
// warnings) into its points, sorted by package, benchmark and unit: one
// per benchmark and unit of time or throughput, the median of the file's
// forks (see [Point]). In an A/B file only the experiment side counts.
// A syntax error, a reading stopped early, a NaN, infinite or negative
// value and a file without any such result are warnings.
func FilePoints(name string, data []byte) (points []FilePoint, warnings []string) {
	markers := result.ForkMarkers(data)
	type key struct{ pkg, name, unit string }
	vals := map[key][]float64{}
	forks := map[key][]int{}
	commit, env := map[key]string{}, map[key]string{}
	higher := map[string]bool{}
	r := benchfmt.NewReader(bytes.NewReader(data), name)
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			warnings = append(warnings, rec.Error())
		case *benchfmt.UnitMetadata:
			if rec.Key == "better" && rec.Value == "higher" {
				higher[rec.Unit] = true
			}
		case *benchfmt.Result:
			if tc := string(rec.GetConfig("toolchain")); tc != "" && tc != "experiment" {
				continue
			}
			c := string(rec.GetConfig("commit"))
			if c == "" {
				c = string(rec.GetConfig("experiment-commit"))
			}
			for _, v := range rec.Values {
				if !SeriesUnit(v.Unit) {
					continue
				}
				_, line := rec.Pos()
				if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) || v.Value < 0 {
					warnings = append(warnings, fmt.Sprintf("%s:%d: %g %s left out", name, line, v.Value, v.Unit))
					continue
				}
				k := key{string(rec.GetConfig("pkg")), "Benchmark" + string(rec.Name.Full()), v.Unit}
				vals[k] = append(vals[k], v.Value)
				forks[k] = append(forks[k], markers[line])
				commit[k], env[k] = c, string(rec.GetConfig("env-id"))
			}
		}
	}
	if err := r.Err(); err != nil {
		warnings = append(warnings, fmt.Sprintf("%s: reading stopped: %v; the results after it are left out", name, err))
	}
	if len(vals) == 0 {
		warnings = append(warnings, fmt.Sprintf("%s: no time or throughput result: not counted as a run", name))
		return nil, warnings
	}
	for k, v := range vals {
		per := perFork(v, forks[k])
		med := verdict.Median(per)
		points = append(points, FilePoint{Pkg: k.pkg, Benchmark: k.name, Unit: k.unit,
			HigherIsBetter: higher[k.unit] || throughput(k.unit),
			Point:          Point{File: name, Commit: commit[k], EnvID: env[k], Value: med, N: len(per), Lo: slices.Min(per), Hi: slices.Max(per)}})
	}
	sort.Slice(points, func(i, j int) bool {
		a, b := points[i], points[j]
		if a.Pkg != b.Pkg {
			return a.Pkg < b.Pkg
		}
		if a.Benchmark != b.Benchmark {
			return a.Benchmark < b.Benchmark
		}
		return a.Unit < b.Unit
	})
	return points, warnings
}

// Shift is a change point of a series with the medians around it.
type Shift struct {
	Index         int // first point of the new segment
	Before, After float64
	Worse         bool
	EnvChanged    bool // the env-id changed there: annotated, not alarmed
	// Small marks a shift of less than CPDOptions.MinEffect times the
	// series' noise (Noise, in the series' unit): annotated, not alarmed.
	Small bool
	Noise float64
	// New marks a worse shift among the last NewWindow points that is
	// neither small nor at a change of environment: a regression, news
	// for nightly's alarm.
	New bool
	// Standing marks a worse shift, neither small nor at a change of
	// environment, whose level still holds: the series' latest segment
	// is worse than the shift's Before by at least MinEffect × Noise. A
	// regression that lasted 20 runs is no news, but it is still open.
	Standing bool
}

// NewWindow is how recent a change point must be to raise an alarm.
const NewWindow = 5

// Analyze finds the shifts of a series. Series shorter than twice the
// minimum segment have none.
func Analyze(s *Series, o CPDOptions) []Shift {
	xs := make([]float64, len(s.Points))
	for i, p := range s.Points {
		xs[i] = p.Value
	}
	cps := ChangePoints(xs, o)
	o.defaults()
	var out []Shift
	bounds := append(append([]int{0}, cps...), len(xs))
	noise := segmentNoise(xs, bounds)
	latest := median(xs[bounds[len(bounds)-2]:])
	for i, cp := range cps {
		before := median(xs[bounds[i]:cp])
		after := median(xs[cp:bounds[i+2]])
		worse := after > before
		if s.HigherIsBetter {
			worse = after < before
		}
		sh := Shift{Index: cp, Before: before, After: after, Worse: worse, Noise: noise,
			EnvChanged: s.Points[cp].EnvID != s.Points[cp-1].EnvID}
		sh.Small = math.Abs(after-before) < o.MinEffect*noise
		sh.New = worse && !sh.EnvChanged && !sh.Small && cp >= len(xs)-NewWindow
		still := latest > before
		if s.HigherIsBetter {
			still = latest < before
		}
		sh.Standing = worse && !sh.EnvChanged && !sh.Small && still && math.Abs(latest-before) >= o.MinEffect*noise
		out = append(out, sh)
	}
	return out
}

// segmentNoise is the robust standard deviation of the points around the
// median of their segment (between consecutive bounds): 1.4826 times the
// median absolute deviation, which a few outlying runs do not move.
func segmentNoise(xs []float64, bounds []int) float64 {
	var dev []float64
	for i := 0; i+1 < len(bounds); i++ {
		seg := xs[bounds[i]:bounds[i+1]]
		m := median(seg)
		for _, x := range seg {
			dev = append(dev, math.Abs(x-m))
		}
	}
	return 1.4826 * median(dev)
}

func median(xs []float64) float64 {
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	n := len(c)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}

// Change is a shift's relative change in percent.
func (s Shift) Change() float64 { return 100 * (s.After/s.Before - 1) }

func (s Shift) String() string {
	return fmt.Sprintf("%+.1f %% at run %d", s.Change(), s.Index)
}

// perFork summarizes a run's values one per fork, the median of the
// fork's iterations, when every value carries a fork marker; otherwise
// (a file of another tool) it returns them as they are. A run's point is
// then the median of its forks, so one process's own state weighs as one
// fork, whatever its iteration count.
func perFork(vals []float64, forks []int) []float64 {
	groups := result.GroupByFork(vals, forks)
	if groups == nil {
		return vals
	}
	out := make([]float64, 0, len(groups))
	for _, g := range groups {
		out = append(out, verdict.Median(g))
	}
	return out
}

// SeriesUnit reports whether a (tidied) unit is one a history follows:
// a time (sec/op, from ns/op), or a throughput (ops/s, or B/s from go
// test's MB/s).
func SeriesUnit(unit string) bool { return unit == "sec/op" || throughput(unit) }

// throughput reports whether a series unit is a rate: higher is better.
func throughput(unit string) bool { return unit == "ops/s" || unit == "B/s" }
