package engine

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aclements/go-moremath/stats"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/fork"
	"github.com/ledgerbench/ledgerbench/internal/gotest"
)

// BenchmarkGoTestTargets measures, side by side on one machine, benchctl's
// forks of a go test benchmark against plain runs of the same test binary,
// alternating: per round one benchctl fork (one measured run, no warmup)
// and one plain process (-test.count=1), at the same benchtime. It reports
//   - median-ratio: median ns/op of the benchctl forks over that of the
//     plain runs (target within 3 %);
//   - overhead-ms/fork: median wall time of a benchctl fork minus that of
//     a plain run (target ≤ 50 ms);
//   - fork-cv-% and count-cv-%: the coefficient of variation of the forks'
//     ns/op against that of -test.count repetitions in one process.
//
// Run it with: go test -run '^$' -bench GoTestTargets -benchtime 1x ./internal/engine
func BenchmarkGoTestTargets(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("the go command is not installed")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	for _, tc := range []struct{ pkg, name, dir string }{
		{"github.com/cespare/xxhash/v2", "BenchmarkSum64/4KB", root},
		{"example.com/gobench/calc", "BenchmarkSizes/size=512/alloc", filepath.Join(root, "benchctl", "testdata", "gobench")},
	} {
		b.Run(strings.ReplaceAll(tc.name, "/", "_"), func(b *testing.B) {
			ctx := context.Background()
			pkgs, err := gotest.Packages(ctx, tc.dir, []string{tc.pkg})
			if err != nil {
				b.Fatal(err)
			}
			bin := filepath.Join(b.TempDir(), "pkg.test")
			if err := gotest.Build(ctx, tc.dir, pkgs[0], bin, ""); err != nil {
				b.Fatal(err)
			}
			const rounds, benchtime = 5, 500 * time.Millisecond
			for b.Loop() {
				o := DefaultOptions()
				o.Forks, o.Warmup, o.Measure = 1, result.IterSpec{}, result.IterSpec{Count: 1, Time: benchtime}
				c := Case{Test: &GoTest{Pkg: tc.pkg, Name: tc.name, Procs: 2}}
				side := Side{Launch: TestBinaries{tc.pkg: {Path: bin, Dir: pkgs[0].Dir}}}
				var forkNs, plainNs, forkWall, plainWall []float64
				for range rounds {
					rn := &Runner{}
					start := time.Now()
					runs, err := rn.RunSides(ctx, o, []Case{c}, []Side{side})
					forkWall = append(forkWall, float64(time.Since(start))/1e6)
					if err != nil || len(runs[0].Cases[0].Iterations) != 1 {
						b.Fatalf("benchctl fork: %v %+v", err, runs[0].Cases[0].Failures)
					}
					forkNs = append(forkNs, runs[0].Cases[0].Iterations[0].Total.NsPerOp)
					ns, wall := plain(b, bin, pkgs[0].Dir, tc.name, 1, benchtime)
					plainNs, plainWall = append(plainNs, ns...), append(plainWall, wall)
				}
				counts, _ := plain(b, bin, pkgs[0].Dir, tc.name, rounds, benchtime)
				b.ReportMetric(median(forkNs)/median(plainNs), "median-ratio")
				b.ReportMetric(median(forkWall)-median(plainWall), "overhead-ms/fork")
				b.ReportMetric(100*cv(forkNs), "fork-cv-%")
				b.ReportMetric(100*cv(counts), "count-cv-%")
				b.Logf("%s: forks %v ns/op, plain runs %v, -count %v", tc.name, forkNs, plainNs, counts)
			}
		})
	}
}

// plain runs the test binary as go test would (in the package directory)
// and returns the ns/op of each result line and the process's wall time
// in ms.
func plain(b *testing.B, bin, dir, name string, count int, benchtime time.Duration) ([]float64, float64) {
	var out strings.Builder
	start := time.Now()
	p, err := fork.Start(context.Background(), fork.Spec{Path: bin, Dir: dir, NoLink: true, Stdout: &out,
		Args: []string{"-test.run=^$", "-test.bench=" + gotest.Exact(name), fmt.Sprintf("-test.count=%d", count),
			"-test.benchtime=" + benchtime.String(), "-test.cpu=2", "-test.benchmem"}})
	if err != nil {
		b.Fatal(err)
	}
	<-p.Exited()
	if err := p.Wait(time.Second); err != nil {
		b.Fatalf("%s: %v\n%s", bin, err, out.String())
	}
	wall := float64(time.Since(start)) / 1e6
	var ns []float64
	for line := range strings.SplitSeq(out.String(), "\n") {
		if r, _ := gotest.ParseLine(line, 2); r != nil && r.Name == name {
			ns = append(ns, r.Values["ns/op"])
		}
	}
	if len(ns) != count {
		b.Fatalf("%d results, want %d:\n%s", len(ns), count, out.String())
	}
	return ns, wall
}

func median(xs []float64) float64 {
	return stats.Sample{Xs: xs}.Copy().Sort().Quantile(0.5)
}

func cv(xs []float64) float64 {
	s := stats.Sample{Xs: xs}
	return s.StdDev() / s.Mean()
}
