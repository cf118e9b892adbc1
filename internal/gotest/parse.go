package gotest

import (
	"fmt"
	"math"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// Result is one result line of a benchmark.
type Result struct {
	// Name is the full benchmark name without go test's -N suffix.
	Name string
	N    int
	// Values are the line's values by the unit go test printed (ns/op,
	// B/op, allocs/op, MB/s and every b.ReportMetric unit), Units their
	// order on the line.
	Values map[string]float64
	Units  []string
}

// ParseLine reads one line of a test binary's output, run with
// -test.cpu=procs: a result, nil for a line that is not one (a
// configuration line, a log line), or an error for a line that starts like
// a result and cannot be read.
func ParseLine(line string, procs int) (*Result, error) {
	if !strings.HasPrefix(line, "Benchmark") {
		return nil, nil
	}
	r := benchfmt.NewReader(strings.NewReader(line+"\n"), "")
	for r.Scan() {
		switch x := r.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, fmt.Errorf("%s", x.Msg)
		case *benchfmt.Result:
			name := "Benchmark" + string(x.Name)
			if procs > 1 {
				name = strings.TrimSuffix(name, fmt.Sprintf("-%d", procs))
			}
			res := &Result{Name: name, N: x.Iters, Values: map[string]float64{}}
			for _, v := range x.Values {
				unit, val := v.Unit, v.Value
				if v.OrigUnit != "" {
					unit, val = v.OrigUnit, v.OrigValue
				}
				if _, dup := res.Values[unit]; !dup {
					res.Units = append(res.Units, unit)
				}
				res.Values[unit] = val
			}
			return res, nil
		}
	}
	return nil, nil
}

// RunArgs is the command line of a test binary that runs exactly the
// benchmark name count times at benchtime with GOMAXPROCS procs: no test,
// -benchmem, -test.v (which prints each result line in one piece after
// the benchmark has returned, so the benchmark's own prints never split
// it), and no -test.timeout (the runner bounds the process itself).
func RunArgs(name string, count int, benchtime string, procs int) []string {
	return []string{"-test.run=^$", "-test.bench=" + Exact(name), fmt.Sprintf("-test.count=%d", count),
		"-test.benchtime=" + benchtime, fmt.Sprintf("-test.cpu=%d", procs), "-test.benchmem", "-test.v", "-test.timeout=0", "-test.paniconexit0"}
}

// Benchtime is the -test.benchtime of an iteration spec: its time, or its
// op count as Nx.
func Benchtime(s result.IterSpec) string {
	if s.Ops > 0 {
		return fmt.Sprintf("%dx", s.Ops)
	}
	if s.Time <= 0 {
		return time.Second.String()
	}
	return s.Time.String()
}

// Iteration is the iteration of result line res, the i-th of fork forkNo
// whose first warm lines are the warmup (-test.count runs them all alike).
func (res *Result) Iteration(forkNo, i, warm int) result.Iteration {
	n := int64(res.N)
	ns := res.Values["ns/op"]
	it := result.Iteration{Fork: forkNo, Index: i, Warmup: i < warm, GoTest: true, Counted: true,
		Executed: n, WallNs: int64(ns * float64(n)),
		AllocBytes: uint64(math.Round(res.Values["B/op"] * float64(n))),
		Allocs:     uint64(math.Round(res.Values["allocs/op"] * float64(n))),
		Total:      result.OpStats{Workers: 1, Ops: n, NsPerOp: ns}}
	if !it.Warmup {
		it.Index = i - warm
	}
	if ns > 0 {
		it.Total.OpsPerSec = 1e9 / ns
	}
	for _, u := range res.Units {
		switch u {
		case "ns/op", "B/op", "allocs/op":
		default:
			if it.Total.Metrics == nil {
				it.Total.Metrics = map[string]float64{}
			}
			it.Total.Metrics[u] = res.Values[u]
		}
	}
	return it
}
