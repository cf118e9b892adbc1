package harness

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// ParamsEnv is the environment variable that overrides parameter values
// under `go test -bench`: entries "name=v1,v2" separated by ";", as the
// -p flags of benchctl ("BENCHCTL_P='impl=paged;size=64,4096'"). The
// test flag -benchctl.p does the same, one entry per flag
// (`go test -bench . -args -benchctl.p impl=paged`).
const ParamsEnv = "BENCHCTL_P"

// paramFlag holds the -benchctl.p values of a test binary.
type paramFlag []string

func (f *paramFlag) String() string     { return strings.Join(*f, ";") }
func (f *paramFlag) Set(s string) error { *f = append(*f, s); return nil }

var testParams paramFlag

func init() {
	if testing.Testing() && flag.Lookup("benchctl.p") == nil {
		flag.Var(&testParams, "benchctl.p", "override a harness parameter's values: name=v1,v2 (repeatable)")
	}
}

// RunB runs a declared benchmark under testing.B, so `go test -bench`
// measures the same Setup, binds and bodies that benchctl does. It runs
// one sub-benchmark per parameter point, named as benchctl names it
// ("BenchmarkX/a=1/b=2" when the wrapper is BenchmarkX, so benchstat
// compares a go test run with a benchctl run), each a trial of one
// measurement iteration of b.N invocations per worker in average-time
// timing (ss and sample run as avgt here).
//
// Parameter values come from the declaration, replaced by [ParamsEnv] or
// -benchctl.p. Under `go test -cpu N` a benchmark that does not fix its
// goroutine count runs N goroutines (N group instances for a group), as
// b.RunParallel does; otherwise its declared count. The reported ns/op,
// B/op and allocs/op are the harness's own figures for the measured
// window (they replace testing's, which would include Setup), plus the
// custom metrics and, for a group, each op's ns/op as "<op>-ns/op".
func RunB(b *testing.B, bench *Benchmark) {
	b.Helper()
	o, err := testOverrides(bench)
	if err != nil {
		b.Fatal(err)
	}
	points, err := Expand(bench, o)
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

// testOverrides parses ParamsEnv and -benchctl.p. A name that neither
// bench nor any benchmark of Default declares is an error; names of other
// benchmarks' parameters are left to them.
func testOverrides(bench *Benchmark) (map[string][]string, error) {
	entries := slices.Clone(testParams)
	if env := os.Getenv(ParamsEnv); env != "" {
		for e := range strings.SplitSeq(env, ";") {
			if strings.TrimSpace(e) != "" {
				entries = append(entries, e)
			}
		}
	}
	if len(entries) == 0 {
		return nil, nil
	}
	known := map[string]bool{}
	for _, bb := range append(Default.Benchmarks(), bench) {
		for _, p := range bb.Params {
			known[p.Name] = true
		}
	}
	o := map[string][]string{}
	for _, e := range entries {
		name, list, ok := strings.Cut(e, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%s: bad entry %q: want name=v1,v2", ParamsEnv, e)
		}
		if !known[name] {
			names := make([]string, 0, len(known))
			for k := range known {
				names = append(names, k)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("%s: unknown parameter %q (declared: %s)", ParamsEnv, name, strings.Join(names, ", "))
		}
		if _, dup := o[name]; dup {
			return nil, fmt.Errorf("%s: parameter %s is given twice", ParamsEnv, name)
		}
		for v := range strings.SplitSeq(list, ",") {
			o[name] = append(o[name], strings.TrimSpace(v))
		}
	}
	return o, nil
}

func runB(b *testing.B, bench *Benchmark, pt result.Params) {
	p := &Plan{
		Benchmark:      bench.ID(),
		Params:         pt,
		Mode:           AverageTime,
		Measure:        result.IterSpec{Count: 1, Ops: int64(max(b.N, 1))},
		Seed:           1,
		ProbeTolerance: 0.05,
	}
	if cpu := flag.Lookup("test.cpu"); cpu != nil && cpu.Value.String() != "" && bench.Goroutines == 0 {
		p.Instances = runtime.GOMAXPROCS(0)
	}
	var last *result.Iteration
	sink, err := Run(bench, p, func(it *result.Iteration) error {
		last = it
		return nil
	})
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

// RunDefault runs the benchmark registered in [Default] under id
// ("family/Name") with [RunB]: the body of a one-line _test.go wrapper.
func RunDefault(b *testing.B, id string) {
	b.Helper()
	bench, ok := Default.Lookup(id)
	if !ok {
		b.Fatalf("no benchmark %s is registered", id)
	}
	RunB(b, bench)
}
