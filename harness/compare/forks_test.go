package compare

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"syscall"
	"time"

	"strings"
	"testing"

	"golang.org/x/perf/benchproc"
)

// abFile is an A/B file of one benchmark with a fork-level random effect:
// each fork's level is drawn once (sdFork, relative), each iteration adds
// its own noise (sdIter); the experiment is shift times slower.
func abFile(rng *rand.Rand, forks, iters int, sdFork, sdIter, shift float64) []byte {
	var b strings.Builder
	for _, side := range []string{"baseline", "experiment"} {
		fmt.Fprintf(&b, "toolchain: %s\n", side)
		for f := 1; f <= forks; f++ {
			level := 100 * (1 + sdFork*rng.NormFloat64())
			if side == "experiment" {
				level *= shift
			}
			for i := range iters {
				fmt.Fprintf(&b, "BenchmarkX-2 1000 %.4f ns/op\n# benchctl: fork=%d iter=%d mode=avgt\n", level*(1+sdIter*rng.NormFloat64()), f, i)
			}
		}
	}
	return []byte(b.String())
}

// rate is the share of n simulated A/B files whose comparison is
// significant at α = 0.05, counted with samples.
func rate(t *testing.T, seed uint64, n int, samples string, shift float64) float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	hits := 0
	for range n {
		ts, err := BuildData("ab.txt", abFile(rng, 5, 5, 0.05, 0.005, shift), Options{Col: "toolchain", Samples: samples})
		if err != nil {
			t.Fatal(err)
		}
		tab := ts.Tables[0]
		row := tab.Rows[0]
		cmp := tab.Compare(tab.cell(row, tab.Cols[0]), tab.cell(row, tab.Cols[1]))
		if cmp.P < 0.05 {
			hits++
		}
	}
	return float64(hits) / float64(n)
}

func TestForkLevelKeepsTheFalseAlarmRate(t *testing.T) {
	// A/A: the same distribution on both sides, with forks that differ
	// by 5 % and iterations by 0.5 %. Counting iterations as independent
	// turns the forks' levels into "changes"; counting forks does not.
	forks := rate(t, 1, 200, Forks, 1)
	iters := rate(t, 1, 200, Iterations, 1)
	if forks > 0.08 {
		t.Errorf("fork-level false-positive rate %.3f over 200 A/A comparisons, want ≤ 0.08 (α = 0.05)", forks)
	}
	if iters < 0.3 {
		t.Errorf("iteration-level false-positive rate %.3f: the simulation has no fork effect to show", iters)
	}
	t.Logf("A/A false-positive rate at α=0.05: fork-level %.3f, iteration-level %.3f", forks, iters)
}

func TestForkLevelDetectsAShift(t *testing.T) {
	// 20 % slower, well beyond the forks' 5 % spread: 5 forks a side see it.
	if p := rate(t, 2, 100, Forks, 1.2); p < 0.9 {
		t.Errorf("fork-level power on a 20 %% shift %.2f, want ≥ 0.9", p)
	}
}

func TestSpreadFinding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	ts, err := BuildData("ab.txt", abFile(rng, 5, 5, 0.05, 0.005, 1), Options{Col: "toolchain"})
	if err != nil {
		t.Fatal(err)
	}
	c := ts.Tables[0].Cells[[2]benchproc.Key{ts.Tables[0].Rows[0], ts.Tables[0].Cols[0]}]
	if c.Forks != 5 || len(c.Values) != 5 || len(c.Raw) != 25 {
		t.Fatalf("cell: %d forks, %d samples, %d raw; want 5, 5, 25", c.Forks, len(c.Values), len(c.Raw))
	}
	if r := c.SpreadRatio(); !(r > SpreadRatio) {
		t.Errorf("spread ratio %.2f for forks 10× noisier than their iterations", r)
	}
	if !strings.Contains(strings.Join(ts.Warnings, "\n"), "each process's own state") {
		t.Errorf("no spread finding in %q", ts.Warnings)
	}
	// Without a fork effect there is no finding.
	ts, _ = BuildData("ab.txt", abFile(rng, 5, 5, 0, 0.005, 1), Options{Col: "toolchain"})
	if strings.Contains(strings.Join(ts.Warnings, "\n"), "each process's own state") {
		t.Errorf("a spread finding without a fork effect: %q", ts.Warnings)
	}
	// benchstat's numbers stay available: one sample per line.
	ts, _ = BuildData("ab.txt", abFile(rng, 5, 5, 0.05, 0.005, 1), Options{Col: "toolchain", Samples: Iterations})
	if c := ts.Tables[0].Cells[[2]benchproc.Key{ts.Tables[0].Rows[0], ts.Tables[0].Cols[0]}]; len(c.Values) != 25 || c.Forks != 0 {
		t.Errorf("iterations: %d samples, %d forks", len(c.Values), c.Forks)
	}
}

func TestMinPAndPowerlessComparisons(t *testing.T) {
	for _, tc := range []struct {
		n1, n2 int
		want   float64
	}{{3, 3, 0.1}, {4, 4, 2.0 / 70}, {5, 5, 2.0 / 252}, {1, 1, 1}, {0, 5, 1}} {
		if got := MinP(tc.n1, tc.n2); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("MinP(%d, %d) = %g, want %g", tc.n1, tc.n2, got, tc.want)
		}
	}
	rng := rand.New(rand.NewPCG(4, 7))
	// 3 forks a side, 50 % slower: the test cannot say so at 0.05.
	ts, err := BuildData("ab.txt", abFile(rng, 3, 5, 0.01, 0.005, 1.5), Options{Col: "toolchain"})
	if err != nil {
		t.Fatal(err)
	}
	// benchstat's numbers (Text) use that test, and say so.
	var text, md bytes.Buffer
	ts.Text(&text, nil)
	want := "1 comparison(s) of 3 against 3 samples cannot be significant at α = 0.05: the smallest p-value their test can give is 0.100; 4 samples a side can reach it"
	if !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	// The verdicts pair the forks of each round: 3 pairs find it.
	ts.Markdown(&md, nil)
	if row := regexp.MustCompile(`(?m)^\| X .*$`).FindString(md.String()); !strings.Contains(row, "**changed**") || !strings.Contains(row, "3 pairs") {
		t.Errorf("3 pairs of a 50 %% change: %q\n%s", row, md.String())
	}
}

func TestGoldenForkLevelMarkdown(t *testing.T) {
	// A fixed A/B file: 5 forks a side of 3 iterations, a fork effect and
	// a 20 % slower experiment, and a floor without the column key.
	rng := rand.New(rand.NewPCG(5, 7))
	data := abFile(rng, 5, 3, 0.03, 0.002, 1.2)
	ts, err := BuildData("ab.txt", data, Options{Col: "toolchain", Baseline: "baseline"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ts.Markdown(&b, []string{"baseline", "experiment"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "forks.md", b.Bytes())

	// The golden interval, re-derived here: the fork medians of each
	// side paired by fork number, Student's t interval of their log
	// ratios with R's qt(0.975, 4) = 2.776445.
	meds := forkMedians(t, data)
	var d []float64
	for f := 1; f <= 5; f++ {
		d = append(d, math.Log(meds["experiment"][f]/meds["baseline"][f]))
	}
	m, sd := meanSD(d)
	half := 2.776445 * sd / math.Sqrt(5)
	want := fmt.Sprintf("%+.1f %% [%+.1f, %+.1f]", 100*(math.Exp(m)-1), 100*(math.Exp(m-half)-1), 100*(math.Exp(m+half)-1))
	if !strings.Contains(b.String(), want) {
		t.Errorf("forks.md lacks the interval %s of the forks paired by round:\n%s", want, b.String())
	}
}

// forkMedians reads an A/B file of abFile's shape: side → fork → the
// median of its iterations.
func forkMedians(t *testing.T, data []byte) map[string]map[int]float64 {
	t.Helper()
	vals := map[string]map[int][]float64{}
	var side string
	var last float64
	for line := range strings.Lines(string(data)) {
		var f, i int
		switch {
		case strings.HasPrefix(line, "toolchain: "):
			side = strings.TrimSpace(strings.TrimPrefix(line, "toolchain: "))
			vals[side] = map[int][]float64{}
		case strings.HasPrefix(line, "BenchmarkX-2 "):
			if _, err := fmt.Sscanf(line, "BenchmarkX-2 1000 %g ns/op", &last); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(line, "# benchctl: fork="):
			if _, err := fmt.Sscanf(line, "# benchctl: fork=%d iter=%d", &f, &i); err != nil {
				t.Fatal(err)
			}
			vals[side][f] = append(vals[side][f], last)
		}
	}
	out := map[string]map[int]float64{}
	for s, forks := range vals {
		out[s] = map[int]float64{}
		for f, xs := range forks {
			slices.Sort(xs)
			out[s][f] = xs[len(xs)/2] // odd counts here
		}
	}
	return out
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// runFile is one run as benchctl writes it: its made-by comment, then
// forks of three iterations of one benchmark.
func runFile(forks int, ns float64) string {
	var b strings.Builder
	b.WriteString("# benchctl: made by `benchctl run` at 2026-12-01T00:00:00Z; raw output, not edited\npkg: p\n")
	for f := 1; f <= forks; f++ {
		for i := range 3 {
			fmt.Fprintf(&b, "BenchmarkX 1000 %g ns/op\n# benchctl: fork=%d iter=%d\n", ns+float64(f)+0.1*float64(i), f, i)
		}
	}
	return b.String()
}

// TestForksOfSeparateRunsStaySeparate: two runs are two sets of
// processes, whether given as two files of one column or concatenated
// into one: their fork=1 lines are two samples, not one.
func TestForksOfSeparateRunsStaySeparate(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "run1.txt"), filepath.Join(dir, "run2.txt")
	os.WriteFile(one, []byte(runFile(2, 100)), 0o644)
	os.WriteFile(two, []byte(runFile(2, 100)), 0o644)
	cat := filepath.Join(dir, "cat.txt")
	os.WriteFile(cat, []byte(runFile(2, 100)+runFile(2, 100)), 0o644)
	for name, paths := range map[string][]string{
		"two files, one label": {"a=" + one, "a=" + two},
		"concatenated":         {cat},
	} {
		ts, err := Build(paths, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tb := ts.Tables[0]
		if c := tb.Cells[[2]benchproc.Key{tb.Rows[0], tb.Cols[0]}]; c.Forks != 4 || len(c.Values) != 4 {
			t.Errorf("%s: %d forks, %d samples; want the 4 processes", name, c.Forks, len(c.Values))
		}
	}
}

// TestValuesThatCannotBeAreLeftOutAlone: a non-finite custom metric
// leaves out that value, not its result line's time (benchstat shows the
// time too), and a negative time is left out with a warning.
func TestValuesThatCannotBeAreLeftOutAlone(t *testing.T) {
	data := "BenchmarkX 10 100 ns/op +Inf x/op\nBenchmarkX 10 101 ns/op 2 x/op\nBenchmarkY 10 -5 ns/op\nBenchmarkY 10 7 ns/op\n"
	ts, err := BuildData("f.txt", []byte(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, tb := range ts.Tables {
		for key, c := range tb.Cells {
			n[key[0].StringValues()+" "+tb.Unit] = len(c.Values)
		}
	}
	if n["X sec/op"] != 2 || n["X x/op"] != 1 || n["Y sec/op"] != 1 {
		t.Errorf("samples %v: want X's two times, its one finite x/op, and Y's one positive time", n)
	}
	w := strings.Join(ts.Warnings, "\n")
	if !strings.Contains(w, "f.txt:1: +Inf x/op left out") || !strings.Contains(w, "f.txt:3: -5e-09 sec/op value, result left out (below zero)") {
		t.Errorf("warnings %q", ts.Warnings)
	}
}

// TestBuildRefusesWhatIsNotAResultsFile: a FIFO (which would block for
// ever) and a device such as /dev/zero (which never ends) are refused at
// once, naming them.
func TestBuildRefusesWhatIsNotAResultsFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, p := range []string{fifo, "/dev/zero", "a=" + fifo} {
		done := make(chan error, 1)
		go func() { _, err := Build([]string{p}, Options{}); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Build(%s) = %v, want it refused as not a regular file", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Build(%s) did not return", p)
		}
	}
}
