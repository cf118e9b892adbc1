package harness

import (
	"testing"
)

// RunB runs a declared benchmark under testing.B, so `go test -bench`
// measures the same Setup, binds and bodies that benchctl does: one
// sub-benchmark per default parameter point (named "a=1/b=2"), each a
// trial of one measurement iteration of b.N invocations per worker in the
// benchmark's mode timing (ss and sample run as avgt here). The reported
// ns/op, B/op and allocs/op are the harness's own figures for the measured
// window (they replace testing's, which would include Setup), plus the
// custom metrics and, for a group, each op's ns/op as "<op>-ns/op".
func RunB(b *testing.B, bench *Benchmark) {
	b.Helper()
	points, err := bench.Expand(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, pt := range points {
		name := pt.Suffix()
		if name == "" {
			runB(b, bench, pt)
			continue
		}
		b.Run(name[1:], func(b *testing.B) { runB(b, bench, pt) })
	}
}

func runB(b *testing.B, bench *Benchmark, pt Params) {
	p := &Plan{
		Benchmark: bench.ID(),
		Params:    pt,
		Mode:      AverageTime,
		Measure:   IterSpec{Count: 1, Ops: int64(max(b.N, 1))},
		Seed:      1,
	}
	var last *Iteration
	var sink uint64
	err := runTrialSink(bench, p, func(it *Iteration) error {
		last = it
		return nil
	}, &sink)
	if err != nil {
		b.Fatal(err)
	}
	Sink(sink)
	b.ReportMetric(last.Total.NsPerOp, "ns/op")
	b.ReportAllocs()
	b.ReportMetric(last.BytesPerOp(), "B/op")
	b.ReportMetric(last.AllocsPerOp(), "allocs/op")
	for unit, v := range last.Total.Metrics {
		b.ReportMetric(v, unit)
	}
	for _, op := range last.Ops {
		b.ReportMetric(op.NsPerOp, op.Name+"-ns/op")
	}
}

// RunDefault runs the benchmark registered in Default under id
// ("family/Name") with RunB; the families' _test.go wrappers call it.
func RunDefault(b *testing.B, id string) {
	b.Helper()
	bench, ok := Default.Lookup(id)
	if !ok {
		b.Fatalf("no benchmark %s is registered", id)
	}
	RunB(b, bench)
}
