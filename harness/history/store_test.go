package history

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeRuns(t *testing.T, dir string, values []float64, env func(i int) string) {
	t.Helper()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i, v := range values {
		p := NightlyPath(dir, "m1", start.Add(time.Duration(i)*24*time.Hour), fmt.Sprintf("%040x", i+1))
		os.MkdirAll(filepath.Dir(p), 0o755)
		body := fmt.Sprintf("env-id: %s\ncommit: %040x\nUnit ops/s better=higher\n", env(i), i+1)
		for j := 0; j < 5; j++ {
			body += fmt.Sprintf("BenchmarkA 100 %g ns/op\nBenchmarkB 100 %g ops/s\n", v*(1+0.01*float64(j-2)), 1e6/v*(1+0.01*float64(j-2)))
		}
		os.WriteFile(p, []byte(body), 0o644)
	}
}

func step(n, at int, before, after float64) []float64 {
	var xs []float64
	for i := 0; i < n; i++ {
		v := before
		if i >= at {
			v = after
		}
		xs = append(xs, v*(1+0.01*float64(i%3-1)))
	}
	return xs
}

func TestSeriesAndShifts(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, dir, step(24, 20, 100, 120), func(int) string { return "e1" })
	runs, err := Runs(dir, "m1")
	if err != nil || len(runs) != 24 || !strings.Contains(runs[0], filepath.Join("nightly", "m1", "2026", "11")) {
		t.Fatalf("runs %d %v", len(runs), err)
	}
	series, _, warns := Load(runs)
	if len(series) != 2 || len(warns) != 0 {
		t.Fatalf("%d series, warnings %v", len(series), warns)
	}
	for _, s := range series {
		shifts := Analyze(s, CPDOptions{Seed: 1})
		if len(shifts) != 1 || shifts[0].Index != 20 || !shifts[0].Worse || !shifts[0].New {
			t.Errorf("%s %s: shifts %+v, want one new worse shift at 20 (a slowdown in both units)", s.Benchmark, s.Unit, shifts)
		}
	}
	m := &MachineReport{MachineID: "m1", Series: series, Shifts: map[*Series][]Shift{}}
	for _, s := range series {
		m.Shifts[s] = Analyze(s, CPDOptions{Seed: 1})
	}
	if regs := m.Regressions(); len(regs) != 2 || !strings.Contains(regs[0], "commits 000000000000..000000000000") && !strings.Contains(regs[0], "..") {
		t.Errorf("regressions %v", regs)
	}
}

// TestOldShiftThatStaysIsStanding: +25 % over the last 20 of 120 runs is
// no news (not New) but still there (Standing); once undone, it is not.
func TestOldShiftThatStaysIsStanding(t *testing.T) {
	series := func(levels ...[2]float64) *Series {
		s := &Series{}
		for _, l := range levels {
			for i := 0; i < int(l[0]); i++ {
				v := l[1] * (1 + 0.005*float64(i%5-2))
				s.Points = append(s.Points, Point{Value: v, EnvID: "e1", Commit: fmt.Sprint(len(s.Points))})
			}
		}
		return s
	}
	shifts := Analyze(series([2]float64{100, 100}, [2]float64{20, 125}), CPDOptions{Seed: 1})
	if len(shifts) != 1 || shifts[0].Index != 100 || shifts[0].New || !shifts[0].Standing {
		t.Errorf("a shift 20 runs old that stays: %+v, want one, standing and not new", shifts)
	}
	shifts = Analyze(series([2]float64{50, 100}, [2]float64{30, 125}, [2]float64{40, 100}), CPDOptions{Seed: 1})
	for _, sh := range shifts {
		if sh.Standing {
			t.Errorf("a shift that was undone stands: %+v", shifts)
		}
	}
	if len(shifts) != 2 {
		t.Errorf("up and back down: %+v, want two shifts", shifts)
	}
}

func TestEnvironmentChangeIsAnnotatedNotAlarmed(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, dir, step(24, 20, 100, 120), func(i int) string {
		if i >= 20 {
			return "e2"
		}
		return "e1"
	})
	runs, _ := Runs(dir, "m1")
	series, _, _ := Load(runs)
	shifts := Analyze(series[0], CPDOptions{Seed: 1})
	if len(shifts) != 1 || !shifts[0].EnvChanged || shifts[0].New {
		t.Errorf("shifts %+v: want the shift annotated as an environment change, not new", shifts)
	}
}

func TestImprovementIsNotARegression(t *testing.T) {
	dir := t.TempDir()
	writeRuns(t, dir, step(24, 20, 120, 100), func(int) string { return "e1" })
	runs, _ := Runs(dir, "m1")
	series, _, _ := Load(runs)
	for _, s := range series {
		if sh := Analyze(s, CPDOptions{Seed: 1}); len(sh) != 1 || sh[0].Worse || sh[0].New {
			t.Errorf("%s: %+v, want one better shift", s.Unit, sh)
		}
	}
}

// TestLoadWarnsOnUnreadableRuns: a line over the reader's limit, a file
// without results, a directory named like a run and a NaN value are each
// a warning naming the file; none is counted as a run, and no series
// holds a NaN (a NaN once made every later chart fail).
func TestLoadWarnsOnUnreadableRuns(t *testing.T) {
	dir := t.TempDir()
	w := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	good := w("1.txt", "commit: a\nBenchmarkX 1 10 ns/op\nBenchmarkX 1 11 ns/op\n")
	long := w("2.txt", "commit: b\nBenchmarkX 1 10 ns/op\n# "+strings.Repeat("x", 70<<10)+"\nBenchmarkX 1 12 ns/op\n")
	garbage := w("3.txt", "\x00\x01 not a results file\n")
	nan := w("4.txt", "commit: d\nBenchmarkX 1 NaN ns/op\nBenchmarkX 1 13 ns/op\n")
	os.Mkdir(filepath.Join(dir, "5.txt"), 0o755)
	series, used, warns := Load([]string{good, long, garbage, nan, filepath.Join(dir, "5.txt")})
	all := strings.Join(warns, "\n")
	for _, want := range []string{long + ": reading stopped", garbage + ": no time or throughput result", nan + ":2: NaN sec/op left out", "5.txt"} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
	if len(used) != 3 || slices.Contains(used, garbage) {
		t.Errorf("counted as runs: %v", used)
	}
	for _, s := range series {
		for _, p := range s.Points {
			if math.IsNaN(p.Value) {
				t.Errorf("%s holds NaN from %s", s.Benchmark, p.File)
			}
		}
	}
}

func TestLoadCountsForks(t *testing.T) {
	// Fork 1 has five fast iterations, forks 2 and 3 one slow each: the
	// median of all seven lines is fast, the median of the forks slow.
	p := filepath.Join(t.TempDir(), "run.txt")
	var b strings.Builder
	b.WriteString("commit: abc\n")
	for i, v := range []float64{10, 10, 10, 10, 10} {
		fmt.Fprintf(&b, "BenchmarkX 100 %g ns/op\n# benchctl: fork=1 iter=%d\n", v, i)
	}
	b.WriteString("BenchmarkX 100 20 ns/op\n# benchctl: fork=2 iter=0\nBenchmarkX 100 21 ns/op\n# benchctl: fork=3 iter=0\n")
	os.WriteFile(p, []byte(b.String()), 0o644)
	series, _, warnings := Load([]string{p})
	if len(series) != 1 || len(warnings) != 0 {
		t.Fatalf("series %v, warnings %v", series, warnings)
	}
	if pt := series[0].Points[0]; pt.N != 3 || pt.Value != 20e-9 {
		t.Errorf("point %+v: want the median of 3 forks, 20ns", pt)
	}
}

// TestLoadMachineKeepsToItsOwnRuns: a machine's history counts only the
// files named as nightly names its runs, holding no other machine's
// results, and no time below zero.
func TestLoadMachineKeepsToItsOwnRuns(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	w := func(p, text string) string {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	own := w(NightlyPath(dir, "m1", at, "aaaa"), "machine-id: m1\ncommit: a\nBenchmarkX 1 10 ns/op\n")
	w(filepath.Join(dir, "nightly", "m1", "notastamp.txt"), "machine-id: m1\ncommit: z\nBenchmarkX 1 99 ns/op\n")
	w(NightlyPath(dir, "m1", at.Add(time.Hour), "bbbb"), "machine-id: m2\ncommit: b\nBenchmarkX 1 50 ns/op\n")
	w(NightlyPath(dir, "m1", at.Add(2*time.Hour), "cccc"), "machine-id: m1\ncommit: c\nBenchmarkX 1 -5 ns/op\n")
	runs, err := Runs(dir, "m1")
	if err != nil {
		t.Fatal(err)
	}
	_, used, warns := LoadMachine(runs, "m1")
	all := strings.Join(warns, "\n")
	if len(used) != 1 || used[0] != own {
		t.Errorf("runs counted: %v, want only %s", used, own)
	}
	for _, want := range []string{"notastamp.txt: not named as a nightly run", "machine-id m2, not m1", "-5e-09 sec/op left out"} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
}

// TestLoadSkipsAFIFO: a FIFO in a machine's history (which would block a
// read for ever, while nightly holds the run lock) is left out with a
// warning.
func TestLoadSkipsAFIFO(t *testing.T) {
	dir := t.TempDir()
	p := NightlyPath(dir, "m1", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), "aaaa")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan []string, 1)
	go func() {
		runs, _ := Runs(dir, "m1")
		_, _, warns := LoadMachine(runs, "m1")
		done <- warns
	}()
	select {
	case warns := <-done:
		if !strings.Contains(strings.Join(warns, "\n"), "not a regular file") {
			t.Errorf("warnings %q", warns)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading the history blocked on a FIFO")
	}
}

// TestREADMEKeepsAStandingRegression: a regression whose change point
// has left the alarm's window but whose level holds is still listed
// under the README's open regressions, with what its bisection found;
// it raises no new alarm.
func TestREADMEKeepsAStandingRegression(t *testing.T) {
	s := &Series{Benchmark: "BenchmarkA", Unit: "sec/op"}
	for i := range 40 {
		v := 100.0
		if i >= 30 {
			v = 168.6
		}
		s.Points = append(s.Points, Point{Value: v * (1 + 0.005*float64(i%5-2)), EnvID: "e1", Commit: fmt.Sprintf("c%03d", i+1)})
	}
	m := &MachineReport{MachineID: "m1", Runs: []string{"r.txt"}, Series: []*Series{s}, Shifts: map[*Series][]Shift{s: Analyze(s, CPDOptions{Seed: 1})},
		Bisected: func(r Regression) string { return "culprit " + short(r.Bad) }}
	if news := m.NewRegressions(); len(news) != 0 {
		t.Errorf("a shift 10 runs old is news: %+v", news)
	}
	var b strings.Builder
	if err := WriteREADME(&b, "", []*MachineReport{m}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "**Open regressions**") || !strings.Contains(b.String(), "BenchmarkA sec/op: +68.") ||
		!strings.Contains(b.String(), "(commits c030..c031), standing") || !strings.Contains(b.String(), "culprit c031") {
		t.Errorf("the README drops the standing regression:\n%s", b.String())
	}
}
