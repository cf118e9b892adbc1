package compare

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// writeFiles writes an old and a new file: Sort unchanged, Concat 4×
// faster, Noop a noisy small change, 8 samples each.
func writeFiles(t *testing.T) (string, string) {
	r := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	write := func(name string, concat float64) string {
		var b strings.Builder
		b.WriteString("goos: linux\ngoarch: amd64\npkg: example\n")
		for i := 0; i < 8; i++ {
			fmt.Fprintf(&b, "BenchmarkSort-2 1000 %.1f ns/op 0 B/op 0 allocs/op\n", 19790*(1+0.3*r.Float64()))
			fmt.Fprintf(&b, "BenchmarkConcat-2 1000 %.1f ns/op %d B/op\n", concat*(1+0.2*r.Float64()), int(concat/2))
			fmt.Fprintf(&b, "BenchmarkNoop-2 1000000 %.3f ns/op\n", 0.38*(1+0.5*r.Float64()))
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(b.String()), 0o644)
		return p
	}
	return write("old.txt", 1214), write("new.txt", 270)
}

var tokenRE = regexp.MustCompile(`[-+]?[0-9.]+[a-zµ]*(?:%)?|~|\(p=[0-9.]+ n=[0-9]+\)`)

// rowTokens maps each benchmark row of a text table to its numbers,
// deltas and p-values, in order, ignoring layout.
func rowTokens(out string) map[string][]string {
	rows := map[string][]string{}
	unit := ""
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(strings.ReplaceAll(line, "│", " "))
		if len(f) == 0 {
			continue
		}
		if f[0] == "sec/op" || f[0] == "B/op" || f[0] == "allocs/op" {
			unit = f[0]
			continue
		}
		if !strings.HasPrefix(f[0], "Sort") && !strings.HasPrefix(f[0], "Concat") && !strings.HasPrefix(f[0], "Noop") && f[0] != "geomean" {
			continue
		}
		rest := strings.Join(f[1:], " ")
		rest = strings.ReplaceAll(rest, "± ", "±")
		var toks []string
		for _, tok := range tokenRE.FindAllString(rest, -1) {
			toks = append(toks, tok)
		}
		rows[unit+" "+f[0]] = toks
	}
	return rows
}

// TestTextMatchesBenchstat: the same input gives the same medians,
// intervals, deltas and p-values as go tool benchstat.
func TestTextMatchesBenchstat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go tool benchstat")
	}
	old, new := writeFiles(t)
	ts, err := Build([]string{old, new}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ours bytes.Buffer
	if err := ts.Text(&ours, nil); err != nil {
		t.Fatal(err)
	}
	ref, err := exec.Command("go", "tool", "benchstat", old, new).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, ref)
	}
	got, want := rowTokens(ours.String()), rowTokens(string(ref))
	if len(want) < 6 {
		t.Fatalf("parsed only %d rows of benchstat's output:\n%s", len(want), ref)
	}
	for row, w := range want {
		if strings.HasSuffix(row, "geomean") {
			continue // benchstat adds footnote markers there
		}
		if fmt.Sprint(got[row]) != fmt.Sprint(w) {
			t.Errorf("%s:\n ours      %v\n benchstat %v", row, got[row], w)
		}
	}
	if t.Failed() {
		t.Logf("ours:\n%s\nbenchstat:\n%s", ours.String(), ref)
	}
}

func TestMarkdownTable(t *testing.T) {
	old, new := writeFiles(t)
	ts, err := Build([]string{old, new}, Options{MinChange: 5})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := ts.Markdown(&md, []string{"Master", "This change"}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{
		"| Benchmark | Master | This change | Change | Verdict | Detectable |",
		"| Sort ", "| Concat ", "| geomean ",
		"**sec/op** at GOMAXPROCS 2, median (min–max) of each side",
		"same when the interval lies within ±5 %",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	concat := regexp.MustCompile(`Concat .*`).FindString(out)
	if !strings.Contains(concat, "-7") || !strings.Contains(concat, "–") || !strings.Contains(concat, "**changed**") {
		t.Errorf("Concat row %q: want a -7x %% change, changed, and min–max ranges", concat)
	}
	// Sort's interval, -12.0 % to +2.1 %, is neither beyond nor within the
	// 5 % margin.
	sortRow := regexp.MustCompile(`Sort .*`).FindString(out)
	if !strings.Contains(sortRow, "-4.6 % [-12.0, +2.1]") || !strings.Contains(sortRow, "unknown (p=0.234") {
		t.Errorf("Sort row %q: want -4.6 %% [-12.0, +2.1], unknown", sortRow)
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Build(nil, Options{}); err == nil {
		t.Error("no files accepted")
	}
	if _, err := Build([]string{"/nonexistent/bench.txt"}, Options{}); err == nil {
		t.Error("a missing file accepted")
	}
	p := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(p, []byte("BenchmarkX 10 notanumber ns/op\nBenchmarkY 10 5 ns/op\n"), 0o644)
	ts, err := Build([]string{p}, Options{})
	if err != nil || len(ts.Warnings) == 0 || !strings.Contains(ts.Warnings[0], "bad.txt:1") {
		t.Errorf("a syntax error: %v, warnings %v; want a positioned warning", err, ts.Warnings)
	}
	if _, err := Build([]string{p}, Options{Col: "/("}); err == nil {
		t.Error("a bad projection accepted")
	}
	// A name past the reader's line limit: the line is named (benchfmt's
	// own error says bufio's "token too long" at the line before).
	huge := filepath.Join(t.TempDir(), "huge.txt")
	os.WriteFile(huge, []byte("pkg: x\nBenchmark"+strings.Repeat("A", 70000)+" 100 5 ns/op\n"), 0o644)
	if _, err := Build([]string{huge}, Options{}); err == nil || !strings.Contains(err.Error(), "huge.txt:2: a line of 70022 bytes, longer than the 65536") {
		t.Errorf("a 70 KB line: %v", err)
	}
	// A file cut mid-line: what it holds is compared, and it is damaged.
	cut := filepath.Join(t.TempDir(), "cut.txt")
	os.WriteFile(cut, []byte("BenchmarkY 10 5 ns/op\nBenchmarkY 10 6 ns/op\n# benchctl: fork=5 it"), 0o644)
	ts, err = Build([]string{cut}, Options{})
	if err != nil || len(ts.Damaged) != 1 || !strings.Contains(ts.Damaged[0], "cut.txt:3: the file ends mid-line") || len(ts.Tables) != 1 {
		t.Errorf("a file cut mid-line: %v, damaged %q", err, ts.Damaged)
	}
}

var update = flag.Bool("update", false, "rewrite the golden files")

func TestGoldenFormats(t *testing.T) {
	old, new := writeFiles(t)
	ts, err := Build([]string{"old=" + old, "new=" + new}, Options{MinChange: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name   string
		render func(io.Writer, []string) error
	}{{"compare.txt", ts.Text}, {"compare.csv", ts.CSV}, {"compare.md", ts.Markdown}} {
		var b bytes.Buffer
		if err := f.render(&b, []string{"Master", "This change"}); err != nil {
			t.Fatal(err)
		}
		golden(t, f.name, b.Bytes())
	}
}

// golden compares got with testdata/name (-update rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file:\n%s", name, got)
	}
}

func TestNoBenchmarkInCommon(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	os.WriteFile(a, []byte("BenchmarkA 1 5 ns/op\nBenchmarkA 1 6 ns/op\n"), 0o644)
	os.WriteFile(b, []byte("BenchmarkB 1 5 ns/op\nBenchmarkB 1 6 ns/op\n"), 0o644)
	ts, err := Build([]string{a, b}, Options{})
	if err != nil || !strings.Contains(strings.Join(ts.Warnings, "\n"), "no benchmark in common") {
		t.Errorf("warnings %v, %v", ts.Warnings, err)
	}
}

// TestNaNAndEmptyFiles: a NaN result is left out with a positioned warning
// (it was summarised as a number), and a file without results is an error
// (it made a one-column table with no warning).
func TestNaNAndEmptyFiles(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	os.WriteFile(a, []byte("BenchmarkX 1 10 ns/op\nBenchmarkX 1 NaN ns/op\nBenchmarkX 1 12 ns/op\n"), 0o644)
	ts, err := Build([]string{a}, Options{})
	if err != nil || !strings.Contains(strings.Join(ts.Warnings, "\n"), a+":2: NaN sec/op value, result left out") {
		t.Errorf("NaN: %v, warnings %v", err, ts.Warnings)
	}
	var text strings.Builder
	ts.Text(&text, nil)
	if !strings.Contains(text.String(), "11.00n") { // the median of 10 and 12, without the NaN
		t.Errorf("the NaN reached the summary:\n%s", text.String())
	}
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("not benchmark output\n"), 0o644)
	if _, err := Build([]string{a, "label=" + empty}, Options{}); err == nil || !strings.Contains(err.Error(), empty+" holds no benchmark result") {
		t.Errorf("a file without results: %v", err)
	}
}

// TestGeomeanMatchesBenchstat: the geomean row follows benchstat's rule
// (every cell of a column, ratios per row, notes where a geomean is
// undefined or the benchmark sets differ), on input where the columns
// have different benchmarks and some summaries are zero. It used to take
// only the rows every column has (146.7n where benchstat says 187.2n) and
// print "?".
func TestGeomeanMatchesBenchstat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go tool benchstat")
	}
	dir := t.TempDir()
	old, new := filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")
	os.WriteFile(old, []byte("BenchmarkSort 1 100 ns/op 0 B/op\nBenchmarkSort 1 110 ns/op 0 B/op\nBenchmarkConcat 1 200 ns/op 8 B/op\nBenchmarkConcat 1 210 ns/op 8 B/op\nBenchmarkNoop 1 300 ns/op 0 B/op\nBenchmarkNoop 1 310 ns/op 0 B/op\n"), 0o644)
	os.WriteFile(new, []byte("BenchmarkSort 1 90 ns/op 0 B/op\nBenchmarkSort 1 95 ns/op 0 B/op\nBenchmarkConcat 1 150 ns/op 8 B/op\nBenchmarkConcat 1 160 ns/op 8 B/op\n"), 0o644)
	ts, err := Build([]string{old, new}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ours bytes.Buffer
	ts.Text(&ours, nil)
	ref, err := exec.Command("go", "tool", "benchstat", old, new).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, ref)
	}
	got, want := rowTokens(ours.String()), rowTokens(string(ref))
	for _, row := range []string{"sec/op geomean", "B/op geomean"} {
		if fmt.Sprint(got[row]) != fmt.Sprint(want[row]) {
			t.Errorf("%s: ours %v, benchstat %v", row, got[row], want[row])
		}
	}
	for _, note := range []string{"benchmark set differs from baseline; geomeans may not be comparable", "summaries must be >0 to compute geomean"} {
		if !strings.Contains(ours.String(), note) || !strings.Contains(string(ref), note) {
			t.Errorf("the note %q is not in both outputs:\nours:\n%s\nbenchstat:\n%s", note, ours.String(), ref)
		}
	}
	if strings.Contains(ours.String(), "?") {
		t.Errorf("a ? where benchstat leaves a footnote:\n%s", ours.String())
	}
}

// TestMarkdownHasNoNamelessColumn: results without the column key (floor
// and no-op benchmarks without /impl) go in a table of their own, not in a
// column with no name.
func TestMarkdownHasNoNamelessColumn(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bench.txt")
	os.WriteFile(p, []byte("BenchmarkInsert/impl=skiplist 1 100 ns/op\nBenchmarkInsert/impl=skiplist 1 102 ns/op\nBenchmarkInsert/impl=paged 1 50 ns/op\nBenchmarkInsert/impl=paged 1 52 ns/op\nBenchmarkNoop 1 2 ns/op\nBenchmarkNoop 1 2.1 ns/op\n"), 0o644)
	ts, err := Build([]string{p}, Options{Col: "/impl"})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	ts.Markdown(&md, []string{"Master", "This change"})
	out := md.String()
	head := regexp.MustCompile(`(?m)^\| Benchmark .*$`).FindAllString(out, -1)
	if len(head) != 2 || strings.Contains(head[0], "|  |") || strings.Count(head[0], "|") != 7 || !strings.Contains(out, "without /impl (not compared)") {
		t.Errorf("headers %q in:\n%s", head, out)
	}
	if strings.Contains(strings.Split(out, "without /impl")[0], "| Noop") {
		t.Errorf("Noop is in the compared table:\n%s", out)
	}
}

// TestNoPercentageFromZero: a change from a zero baseline (allocations
// below resolution) is never a percentage (it read "+41922299.88 %").
func TestNoPercentageFromZero(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bench.txt")
	var b strings.Builder
	for range 6 {
		b.WriteString("BenchmarkA/impl=old 1 10 ns/op 0 B/op\nBenchmarkA/impl=new 1 10 ns/op 48 B/op\n")
	}
	os.WriteFile(p, []byte(b.String()), 0o644)
	ts, err := Build([]string{p}, Options{Col: "/impl"})
	if err != nil {
		t.Fatal(err)
	}
	var md, text bytes.Buffer
	ts.Markdown(&md, nil)
	ts.Text(&text, nil)
	for _, out := range []string{md.String(), text.String()} {
		if strings.Contains(out, "Inf") || regexp.MustCompile(`\+[0-9.]{5,} ?%`).MatchString(out) {
			t.Errorf("a percentage from a zero baseline:\n%s", out)
		}
	}
	if !strings.Contains(md.String(), "no % from a zero baseline") {
		t.Errorf("Markdown does not say why:\n%s", md.String())
	}
}

// TestSampleWarningsSaidOnce: the per-cell "need >= N samples" warnings
// of a quick run are one line with their count, not one per cell.
func TestSampleWarningsSaidOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bench.txt")
	os.WriteFile(p, []byte("BenchmarkA 1 10 ns/op\nBenchmarkA 1 11 ns/op\nBenchmarkB 1 20 ns/op\nBenchmarkB 1 21 ns/op\nBenchmarkC 1 30 ns/op\nBenchmarkC 1 31 ns/op\n"), 0o644)
	ts, err := Build([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	ts.Text(&text, nil)
	if n := strings.Count(text.String(), "need >= 6 samples"); n != 1 || !strings.Contains(text.String(), "(3 summaries;") {
		t.Errorf("%d sample-size warnings:\n%s", n, text.String())
	}
}

// TestCorroboration: a time change whose instructions and allocations
// stayed put is "time only"; one whose instructions moved with it is
// confirmed; the instructions, an exact count, are compared as such.
func TestCorroboration(t *testing.T) {
	var b strings.Builder
	b.WriteString("Unit instructions/op assume=exact\n")
	for i := range 6 {
		jitter := float64(i%3) - 1
		// Steady: 10 % slower, same instructions, same allocations.
		fmt.Fprintf(&b, "BenchmarkSteady/impl=old 1 %g ns/op 4 allocs/op\nBenchmarkSteady/impl=new 1 %g ns/op 4 allocs/op\n", 100+jitter, 110+jitter)
		// Work: 10 % slower with 10 % more instructions.
		fmt.Fprintf(&b, "BenchmarkWork/impl=old 1 %g ns/op 4 allocs/op\nBenchmarkWork/impl=new 1 %g ns/op 4 allocs/op\n", 200+jitter, 220+jitter)
	}
	b.WriteString("BenchmarkSteady/impl=old 1 1000 instructions/op\nBenchmarkSteady/impl=new 1 1000 instructions/op\n")
	b.WriteString("BenchmarkWork/impl=old 1 2000 instructions/op\nBenchmarkWork/impl=new 1 2200 instructions/op\n")
	p := filepath.Join(t.TempDir(), "bench.txt")
	os.WriteFile(p, []byte(b.String()), 0o644)
	ts, err := Build([]string{p}, Options{Col: "/impl", Baseline: "old", MinChange: 1})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	ts.Markdown(&md, nil)
	out := md.String()
	steady := regexp.MustCompile(`(?m)^\| Steady .*$`).FindString(out)
	work := regexp.MustCompile(`(?m)^\| Work .*$`).FindString(out)
	if !strings.Contains(steady, "**changed**") || !strings.Contains(steady, "instructions +0.00 %, allocs +0.00 %: **time only**") {
		t.Errorf("steady row %q: want a change that is time only\n%s", steady, out)
	}
	if !strings.Contains(work, "instructions +10.0 %, allocs +0.00 %: confirmed") {
		t.Errorf("work row %q: want a change the instructions confirm\n%s", work, out)
	}
	var instr *Table
	for _, tb := range ts.Tables {
		if tb.Unit == "instructions/op" {
			instr = tb
		}
	}
	if instr == nil {
		t.Fatal("no instructions/op table")
	}
	d := instr.Decision(instr.Rows[1], instr.Cols[1])
	if d == nil || d.Change.Lo != d.Change.Hi || d.Verdict.String() != "changed" {
		t.Errorf("an exact count's change: %+v", d)
	}
}
