package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// telemetryPrefix starts the comment lines that carry per-iteration
// telemetry; benchstat ignores them.
const telemetryPrefix = "# benchctl: "

// WriteBenchfmt writes the measurement iterations of run in Go benchmark
// format: one result line per iteration (and per op of a group), the
// header keys as config lines, Unit metadata lines, and telemetry and
// failures as "# benchctl:" comments. An iteration's telemetry comment
// follows its (first) result line.
func WriteBenchfmt(out io.Writer, h Header, run *result.Run) error {
	return WriteSides(out, []Side{{h, run}})
}

// Side is one side of a results file: an A/B file has two, whose headers
// differ in Toolchain only.
type Side struct {
	Header Header
	Run    *result.Run
}

// WriteSides writes the runs of every side into one file, each with its
// header's config lines.
func WriteSides(out io.Writer, sides []Side) error {
	bw := bufio.NewWriter(out)
	w := benchfmt.NewWriter(bw)
	comment := func(format string, args ...any) {
		for line := range strings.SplitSeq(fmt.Sprintf(format, args...), "\n") {
			bw.WriteString(telemetryPrefix + line + "\n")
		}
	}
	h, run := sides[0].Header, sides[0].Run
	o := run.Config
	comment("made by `%s` at %s; raw output, not edited", h.Command, h.Started.Format("2006-01-02T15:04:05Z"))
	for _, n := range h.Notes {
		comment("%s", n)
	}
	comment("seed=%d forks=%d warmup=%s measure=%s timeout=%s order=forks in rounds, cases shuffled per round from the seed", o.Seed, o.Forks, o.Warmup, o.Measure, o.Timeout)
	if o.Precision > 0 {
		comment("precision=±%g%% budget=%s: forks added, beyond the %d above, to each case until the 95%% interval of its forks' mean was within it", 100*o.Precision, o.Budget, o.Forks)
	}
	if o.Shard != "" {
		comment("shard=%s: these are share %s of the selected cases (each benchmark's implementations kept together, the shares dealt by planned time); compare the shares' files together for the whole table", o.Shard, o.Shard)
	}
	if !run.End.IsZero() && run.End.After(run.Start) {
		comment("the run took %.1f s", run.End.Sub(run.Start).Seconds())
	}
	if o.Duet {
		comment("duet: each round ran a case's forks of both sides at the same time, each pinned to half of the CPUs (swapped every round), their iterations on one schedule; the order below names each side's CPUs")
	}
	label := "A/B fork order (round:case:sides)"
	for i := 0; i < len(run.Order); i += orderPerLine {
		comment("%s: %s", label, strings.Join(run.Order[i:min(i+orderPerLine, len(run.Order))], " "))
		label = "A/B fork order, continued"
	}
	if run.InProcess {
		comment("WARNING: --forks 0 ran every benchmark in the benchctl process: heap, GC and scheduler state carry over between benchmarks, so results are less trustworthy")
	}
	if h.HostPinned != "yes" {
		comment("host-pinned=%s: %s", h.HostPinned, h.HostNote)
	}
	units := map[string]bool{}
	for _, side := range sides {
		if err := writeRun(w, comment, side.Header, side.Run, units); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// orderPerLine is how many forks of the A/B order one comment line
// names: readers of the format (x/perf's benchfmt, so benchstat) refuse
// a line over 64 KiB, and a calibration's order names thousands.
const orderPerLine = 256

// writeRun writes one side's cases, each with its header's config
// lines; units remembers the Unit metadata lines already written, since a
// file carries each only once.
func writeRun(w *benchfmt.Writer, comment func(string, ...any), h Header, run *result.Run, units map[string]bool) error {
	base := h.keys()
	for _, cr := range run.Cases {
		cfg := make([]benchfmt.Config, 0, len(base)+1)
		for _, kv := range base {
			cfg = append(cfg, benchfmt.Config{Key: kv[0], Value: []byte(kv[1]), File: true})
		}
		cfg = append(cfg, benchfmt.Config{Key: "pkg", Value: []byte(cr.Case.Pkg), File: true})
		cw := &caseWriter{w: w, comment: comment, cr: cr, cfg: cfg, units: units,
			name: strings.TrimPrefix(cr.Case.Name(), "Benchmark")}
		// go test's GOMAXPROCS suffix, so benchstat matches these rows
		// with a go test -bench run of the same benchmarks.
		if cr.Procs > 1 {
			cw.procs = fmt.Sprintf("-%d", cr.Procs)
		}
		for _, step := range []func() error{cw.unitLines, cw.iterations, cw.instructions, cw.counters} {
			if err := step(); err != nil {
				return err
			}
		}
		cw.notes(len(run.Config.CPUs) > 0)
	}
	return nil
}

// caseWriter writes one case's lines of a results file.
type caseWriter struct {
	w       *benchfmt.Writer
	comment func(string, ...any)
	cr      *result.CaseResult
	cfg     []benchfmt.Config
	units   map[string]bool
	name    string // the case's name without "Benchmark"
	procs   string // "-N" for GOMAXPROCS N > 1
}

// result writes one result line named name+suffix+procs.
func (c *caseWriter) result(suffix string, iters int64, values []benchfmt.Value) error {
	return c.w.Write(&benchfmt.Result{Config: c.cfg, Name: benchfmt.Name(c.name + suffix + c.procs), Iters: int(iters), Values: values})
}

// unitLines writes the case's Unit metadata not yet in the file.
func (c *caseWriter) unitLines() error {
	for _, u := range unitMetadata(c.cr) {
		key := u.Unit + " " + u.Key
		if c.units[key] {
			continue
		}
		c.units[key] = true
		if err := c.w.Write(u); err != nil {
			return err
		}
	}
	return nil
}

// iterations writes a result line per measured iteration, followed by
// its telemetry comment, and for a group one line per op after it.
func (c *caseWriter) iterations() error {
	for _, it := range measured(c.cr.Iterations) {
		suffix := "" // a group's total is its op=all row
		if len(it.Ops) > 0 {
			suffix = "/op=all"
		}
		if err := c.result(suffix, it.Total.Ops, iterationValues(c.cr.Mode, &it.Total, it)); err != nil {
			return err
		}
		c.comment("%s", telemetry(c.cr, it))
		for i := range it.Ops {
			op := &it.Ops[i]
			if err := c.result("/op="+op.Name, op.Ops, iterationValues(c.cr.Mode, op, nil)); err != nil {
				return err
			}
		}
	}
	return nil
}

// goTest reports whether the case ran as a go test benchmark.
func (c *caseWriter) goTest() bool {
	return len(c.cr.Iterations) > 0 && c.cr.Iterations[0].GoTest
}

// instructions writes the instructions/op of the case's callgrind
// profiles, exact counts, with how they were counted.
func (c *caseWriter) instructions() error {
	for _, pr := range c.cr.Profiles {
		if pr.Kind != string(profile.Instructions) || pr.InstructionsPerOp <= 0 {
			continue
		}
		if !c.units["instructions/op assume"] {
			c.units["instructions/op assume"] = true
			u := &benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: "instructions/op", Key: "assume"}, OrigUnit: "instructions/op", Value: "exact"}
			if err := c.w.Write(u); err != nil {
				return err
			}
		}
		if err := c.result("", pr.Ops, []benchfmt.Value{{Value: pr.InstructionsPerOp, Unit: "instructions/op"}}); err != nil {
			return err
		}
		if c.goTest() {
			c.comment("%s: instructions/op from callgrind (GOMAXPROCS=1, GOGC=off): the whole test binary counted at b.N=%d and %d: their difference per op", c.cr.Case.Name(), pr.Ops, 2*pr.Ops)
		} else {
			c.comment("%s: instructions/op from callgrind (GOMAXPROCS=1, GOGC=off, collected in the measured loop only)", c.cr.Case.Name())
		}
	}
	return nil
}

// counters writes the hw-*/op of the case's perf stat profiles.
func (c *caseWriter) counters() error {
	for _, pr := range c.cr.Profiles {
		if pr.Kind != string(profile.Perf) || len(pr.Counters) == 0 {
			continue
		}
		var values []benchfmt.Value
		for _, ev := range slices.Sorted(maps.Keys(pr.Counters)) {
			values = append(values, benchfmt.Value{Value: pr.Counters[ev], Unit: "hw-" + ev + "/op"})
		}
		if err := c.result("", pr.Ops, values); err != nil {
			return err
		}
		c.comment("%s: hw-*/op from perf stat, counters enabled around the measured loop only", c.cr.Case.Name())
	}
	return nil
}

// notes writes the case's start-up times, the CPUs of its forks (when
// the run pinned them), its notes and its failures as comments.
func (c *caseWriter) notes(pinned bool) {
	cr := c.cr
	for i, d := range cr.Startup {
		line := fmt.Sprintf("%s start-up %d: exec to hello %.1fms", cr.Case.Name(), i+1, float64(d)/1e6)
		if c.goTest() {
			line = fmt.Sprintf("%s start-up %d: exec to the test binary's first output line %.1fms", cr.Case.Name(), i+1, float64(d)/1e6)
		}
		if i < len(cr.Ready) {
			line += fmt.Sprintf(", exec to first iteration %.1fms", float64(cr.Ready[i])/1e6)
		}
		c.comment("%s", line)
	}
	for i, cpus := range cr.ForkCPUs {
		if len(cpus) > 0 && pinned {
			c.comment("%s fork %d ran on CPUs %v", cr.Case.Name(), i+1, cpus)
		}
	}
	for _, n := range cr.Notes {
		c.comment("%s %s", cr.Case.Name(), n)
	}
	for _, f := range cr.Failures {
		c.comment(strings.TrimPrefix(result.FailedMarker, telemetryPrefix)+"%s", f.Error())
	}
}

// telemetry is the comment line that precedes an iteration's result.
func telemetry(cr *result.CaseResult, it *result.Iteration) string {
	if it.GoTest {
		// The fork's own line as go test printed it: no probe, no GC
		// count, and go test's own B/op and allocs/op.
		return fmt.Sprintf("fork=%d iter=%d mode=%s go-test b.N=%d", it.Fork, it.Index, cr.Mode, it.Executed)
	}
	flag := "no"
	if it.Flagged {
		flag = "yes"
	}
	s := fmt.Sprintf("fork=%d iter=%d mode=%s goroutines=%d wall=%.1fms executed=%d probe-mhz=%.0f/%.0f drift=%.1f%% flagged=%s",
		it.Fork, it.Index, cr.Mode, it.Total.Workers, float64(it.WallNs)/1e6, it.Executed,
		it.ProbeBefore, it.ProbeAfter, 100*it.Drift(), flag)
	s += fmt.Sprintf(" alloc-bytes=%d allocs=%d gcs=%d", it.AllocBytes, it.Allocs, it.GCs)
	if it.BelowResolution() {
		s += " allocs-below-resolution=yes"
	}
	if it.TimerNs > 0 {
		s += fmt.Sprintf(" timer-ns=%.1f", it.TimerNs)
	}
	if it.TempC > 0 {
		s += fmt.Sprintf(" temp-c=%.1f", it.TempC)
	}
	s += fmt.Sprintf(" steal=%.1f%%", it.StealPct)
	return s
}

// iterationValues are the values of one result line. it is nil for the
// per-op lines of a group, which carry no allocation figures.
func iterationValues(mode result.Mode, s *result.OpStats, it *result.Iteration) []benchfmt.Value {
	vals := []benchfmt.Value{{Value: s.Score(mode), Unit: mode.Unit()}}
	if mode == result.SampleTime && len(s.Hist) > 0 {
		if h, err := result.DecodeHistogram(s.Hist); err == nil {
			for _, p := range []float64{50, 90, 99, 99.9, 99.99} {
				vals = append(vals, benchfmt.Value{Value: float64(h.ValueAtQuantile(p)), Unit: "p" + strings.TrimSuffix(percentileKey(p), ".0") + "-ns/op"})
			}
		}
		if it != nil && it.TimerNs > 0 {
			vals = append(vals, benchfmt.Value{Value: it.TimerNs, Unit: "timer-ns/op"})
		}
	}
	if it != nil {
		vals = append(vals,
			benchfmt.Value{Value: it.BytesPerOp(), Unit: "B/op"},
			benchfmt.Value{Value: it.AllocsPerOp(), Unit: "allocs/op"})
		if !it.GoTest {
			vals = append(vals, benchfmt.Value{Value: it.GCsPerOp(), Unit: "gc/op"})
		}
	}
	for _, u := range slices.Sorted(maps.Keys(s.Metrics)) {
		vals = append(vals, benchfmt.Value{Value: s.Metrics[u], Unit: u})
	}
	return vals
}

// unitMetadata returns the Unit lines a case needs.
func unitMetadata(cr *result.CaseResult) []*benchfmt.UnitMetadata {
	var out []*benchfmt.UnitMetadata
	add := func(unit, key, value string) {
		out = append(out, &benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: unit, Key: key}, OrigUnit: unit, Value: value})
	}
	if cr.Mode == result.Throughput {
		add("ops/s", "better", "higher")
	}
	for _, u := range cr.Case.Units {
		if u.Better != "" {
			add(u.Unit, "better", u.Better)
		}
		if u.Assume != "" {
			add(u.Unit, "assume", u.Assume)
		}
	}
	return out
}
