package benchctl

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/gotest"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// gobench is the fixture module of ordinary testing.B benchmarks.
func gobench(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds test binaries")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "gobench"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// quick are the run flags of the package tests: short and one fork.
var quick = []string{"--forks", "1", "--warmup", "1x20ms", "--measure", "2x20ms"}

// results reads a bench.txt: every result line's name and its values by
// unit.
func results(t *testing.T, path string) map[string][]map[string]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]map[string]float64{}
	r := benchfmt.NewReader(bytes.NewReader(data), path)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		if pkg := res.GetConfig("pkg"); pkg != "example.com/gobench/calc" && pkg != "example.com/gobench/faulty" && pkg != "example.com/gobench/hostile" {
			t.Errorf("%s: pkg %q", res.Name, pkg)
		}
		vals := map[string]float64{}
		for _, v := range res.Values {
			u, x := v.Unit, v.Value
			if v.OrigUnit != "" {
				u, x = v.OrigUnit, v.OrigValue
			}
			vals[u] = x
		}
		out[string(res.Name.Full())] = append(out[string(res.Name.Full())], vals)
	}
	return out
}

func TestRunGoTestBenchmarks(t *testing.T) {
	dir := gobench(t)
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := abApp(t, dir, append([]string{"run", "./calc", "--out", out}, quick...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	res := results(t, filepath.Join(out, "bench.txt"))
	procs := regexp.MustCompile(`-\d+$`)
	got := map[string]bool{}
	for name := range res {
		got[procs.ReplaceAllString(name, "")] = true
	}
	// Every kind of benchmark, each leaf of the sub-benchmark tree, the
	// one that reads testdata through a relative path; not the skipped one.
	for _, want := range []string{"SumN", "SumLoop", "Parallel", "Metric", "Sizes/size=8/alloc", "Sizes/size=8/sum",
		"Sizes/size=512/alloc", "Sizes/size=512/sum", "Testdata", "Print"} {
		if !got[want] {
			t.Errorf("no results of Benchmark%s (got %v)", want, got)
		}
	}
	if got["Skip"] || got["Sizes"] || got["NotAResult"] {
		t.Errorf("results of a benchmark that skipped, a parent or a printed line: %v", got)
	}
	for name, lines := range res {
		if len(lines) != 2 {
			t.Errorf("%s: %d result lines, want the 2 measured (the warmup is not written)", name, len(lines))
		}
		for _, v := range lines {
			if v["ns/op"] <= 0 {
				t.Errorf("%s: ns/op %v", name, v)
			}
			if _, ok := v["gc/op"]; ok {
				t.Errorf("%s: a gc/op figure go test never measured", name)
			}
		}
	}
	for name, lines := range res {
		v := lines[0]
		switch procs.ReplaceAllString(name, "") {
		case "Sizes/size=512/alloc":
			if v["B/op"] != 512 || v["allocs/op"] != 1 {
				t.Errorf("%s: go test's own allocation figures lost: %v", name, v)
			}
		case "Metric":
			if v["widgets/op"] != 3 || v["MB/s"] <= 0 {
				t.Errorf("%s: b.ReportMetric or b.SetBytes lost: %v", name, v)
			}
		}
	}
	txt, _ := os.ReadFile(filepath.Join(out, "bench.txt"))
	for _, want := range []string{
		"BenchmarkSkip skipped itself (b.Skip): calc_test.go",
		`BenchmarkPrint fork 1: output line`, `cannot be read as a result`, `"BenchmarkNotAResult 12 lines ns/op"`,
		"fork=1 iter=1 mode=avgt go-test b.N=",
	} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("bench.txt lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "bench.json")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(stdout, "BenchmarkSizes/size=8/alloc") || !strings.Contains(stdout, "widgets/op") {
		t.Errorf("console table:\n%s", stdout)
	}
	if code, cmp, stderr := abApp(t, dir, "compare", filepath.Join(out, "bench.txt")); code != 0 || !strings.Contains(cmp, "Sizes/size=8/alloc") {
		t.Errorf("compare: exit %d\n%s\n%s", code, cmp, stderr)
	}
}

func TestRunGoTestFaults(t *testing.T) {
	dir := gobench(t)
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := abApp(t, dir, append([]string{"run", "./faulty", "--timeout", "1s", "--out", out}, quick...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	// A fork whose first run (b.N = 1) outlasted the 20 ms benchtime on a
	// loaded host printed that result before failing at a larger b.N: its
	// message then says the line is not counted.
	for _, bench := range []struct{ name, status string }{{"Panic", "2"}, {"Exit", "3"}} {
		re := regexp.MustCompile(`FAILED Benchmark` + bench.name + ` fork 1: the test binary failed(\n  \(its result lines are not counted: only a test binary that ends with PASS vouches for them\))? \(child exit status ` + bench.status + `\)`)
		if !re.MatchString(stderr) {
			t.Errorf("stderr does not match %s:\n%s", re, stderr)
		}
	}
	for _, want := range []string{
		"| panic: fixture: boom",
		"FAILED BenchmarkHang fork 1: hung: no result for", "; killed",
		"FAILED BenchmarkFatal fork 1: the test binary failed:", "faulty_test.go:36: fixture: the benchmark failed",
		"FAILED BenchmarkLookAlike fork 1: the test binary printed", "the benchmark prints lines that read as its results, so none is counted",
		"5 fork(s) failed",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	res := results(t, filepath.Join(out, "bench.txt"))
	var ok int
	for name, lines := range res {
		if !strings.HasPrefix(name, "OK") {
			t.Errorf("results of a failed benchmark: %s", name)
		}
		ok += len(lines)
	}
	if ok != 2 {
		t.Errorf("%d results of BenchmarkOK, want 2 (every result obtained is kept)", ok)
	}
	if txt, _ := os.ReadFile(filepath.Join(out, "bench.txt")); !strings.Contains(string(txt), "# benchctl: FAILED BenchmarkHang fork 1") {
		t.Errorf("bench.txt does not record the failures:\n%s", txt)
	}
}

func TestGoTestBadInput(t *testing.T) {
	dir := gobench(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"./nothing/..."}, 2, "package ./nothing/..."},
		{[]string{"./empty"}, 2, "./empty: no benchmarks"},
		{[]string{"./broken"}, 1, "broken/broken_test.go:6:2: undefined: undefinedFunction"},
		{[]string{"./calc", "--bench", "Nope"}, 2, "--bench Nope matches no benchmark that runs; the benchmarks are:\n  example.com/gobench/calc: BenchmarkSumN"},
		{[]string{"./calc", "--bench", "^BenchmarkSkip$"}, 2, "--bench ^BenchmarkSkip$ matches no benchmark that runs:\n  example.com/gobench/calc: BenchmarkSkip skipped itself (b.Skip): calc_test.go"},
		{[]string{"./calc", "--bench", "Sizes/("}, 2, "--bench Sizes/("},
		{[]string{"./calc", "--suite", "x"}, 2, "--suite applies to registered benchmarks"},
		{[]string{"./calc", "-p", "size=1"}, 2, "--param applies to registered benchmarks"},
		{[]string{"./calc", "--forks", "0"}, 2, "--forks 0: go test benchmarks run in their test binaries' own processes"},
		{[]string{"./calc", "--prof", "offcpu"}, 2, "--prof offcpu is not available for go test benchmarks"},
		{[]string{"-", "./calc"}, 2, "must not start with -"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := append(append(append([]string{"run"}, quick...), tc.args...), "--out", out)
		code, _, stderr := abApp(t, dir, args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("run %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.want)
		}
		if _, err := os.Stat(out); err == nil && tc.code == 2 {
			t.Errorf("run %s: created %s on bad input", strings.Join(tc.args, " "), out)
		}
	}
}

func TestGoTestProfiles(t *testing.T) {
	dir := gobench(t)
	out := filepath.Join(t.TempDir(), "run")
	prof := "cpu,allocs,block,mutex"
	_, vgErr := exec.LookPath("valgrind")
	if vgErr == nil {
		prof += ",instructions"
	} else if testenv.CI() {
		t.Fatal("LEDGERBENCH_CI is set, yet valgrind is not installed: CI counts instructions")
	}
	code, stdout, stderr := abApp(t, dir, append([]string{"run", "./calc", "--bench", "SumN|Sizes/size=8/alloc", "--prof", prof, "--out", out}, quick...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, bench := range []string{"BenchmarkSumN", "BenchmarkSizes/size=8/alloc"} {
		for _, k := range []string{"cpu", "allocs", "block", "mutex"} {
			if _, err := os.Stat(filepath.Join(out, "profiles", bench, k+".pb.gz")); err != nil {
				t.Errorf("no %s profile of %s: %v", k, bench, err)
			}
		}
	}
	summary, err := os.ReadFile(filepath.Join(out, "profiles", "summary.md"))
	if err != nil || !strings.Contains(string(summary), "example.com/gobench/calc.BenchmarkSizes.func1.1") {
		t.Errorf("the summary lacks the benchmark's own frame: %v\n%s", err, summary)
	}
	if vgErr != nil {
		t.Log("valgrind is not installed: instructions not checked")
		return
	}
	res := results(t, filepath.Join(out, "bench.txt"))
	for name, lines := range res {
		for _, v := range lines {
			ins, ok := v["instructions/op"]
			if !ok {
				continue
			}
			// Sum of 64 bytes is a loop of 64 adds: a few instructions each.
			if strings.HasPrefix(name, "SumN") && (ins < 64 || ins > 64*10) {
				t.Errorf("%s: %g instructions/op", name, ins)
			}
			if ins <= 0 {
				t.Errorf("%s: %g instructions/op", name, ins)
			}
		}
	}
	if txt, _ := os.ReadFile(filepath.Join(out, "bench.txt")); !strings.Contains(string(txt), "instructions/op from callgrind") {
		t.Error("bench.txt has no instructions/op")
	}
}

// TestGoTestProfilesWithARelativeOut: a relative --out (the default is
// one) names a directory of benchctl's working directory, though the test
// binaries run in their packages' directories: every profile lands in it.
func TestGoTestProfilesWithARelativeOut(t *testing.T) {
	dir := gobench(t)
	t.Chdir(t.TempDir())
	code, stdout, stderr := abApp(t, dir, append([]string{"run", "./calc", "--bench", "SumN$", "--prof", "cpu,allocs", "--out", "rel"}, quick...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, k := range []string{"cpu", "allocs"} {
		if _, err := os.Stat(filepath.Join("rel", "profiles", "BenchmarkSumN", k+".pb.gz")); err != nil {
			t.Errorf("no %s profile under the relative --out: %v", k, err)
		}
	}
}

// goRepo makes a git repository of a module of plain testing.B
// benchmarks: the first commit has BenchmarkWork; the second adds
// BenchmarkNew in a file of its own and makes Work 4× slower.
func goRepo(t *testing.T) (dir string, commits [2]string) {
	t.Helper()
	needGit(t)
	gobench(t)
	dir = t.TempDir()
	write, gitT := repoTools(t, dir)
	work := "package work\n\n// Work spins.\nfunc Work(x uint64) uint64 {\n\tfor i := 0; i < ROUNDS; i++ {\n\t\tx = x*6364136223846793005 + 1442695040888963407\n\t}\n\treturn x\n}\n"
	gitT("init", "-q")
	write("go.mod", "module example.com/abgo\n\ngo 1.24\n")
	write("work/work.go", strings.Replace(work, "ROUNDS", "64", 1))
	write("work/work_test.go", "package work\n\nimport \"testing\"\n\nvar sink uint64\n\nfunc BenchmarkWork(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\tsink = Work(sink)\n\t}\n}\n")
	gitT("add", ".")
	gitT("commit", "-q", "-m", "work")
	commits[0] = gitT("rev-parse", "HEAD")
	write("work/work.go", strings.Replace(work, "ROUNDS", "256", 1))
	write("work/new_test.go", "package work\n\nimport \"testing\"\n\nfunc BenchmarkNew(b *testing.B) {\n\tfor b.Loop() {\n\t\tsink = Work(sink)\n\t}\n}\n")
	gitT("add", ".")
	gitT("commit", "-q", "-m", "slower, and a new benchmark")
	commits[1] = gitT("rev-parse", "HEAD")
	return dir, commits
}

// TestSelectionThatMatchesNothing: ab and bisect of packages whose
// benchmarks --bench matches at neither revision are usage errors that
// say so, not a failed comparison or talk of overlays.
func TestSelectionThatMatchesNothing(t *testing.T) {
	dir, c := goRepo(t)
	for _, args := range [][]string{
		{"ab", "--base", c[0], "--head", c[1]},
		{"bisect", "--good", c[0], "--bad", c[1], "--forks", "3"},
	} {
		args = append(args, "./work", "--bench", "^BenchmarkNoSuch$", "--warmup", "0", "--measure", "1x10ms", "--out", filepath.Join(t.TempDir(), "o"))
		code, _, stderr := abApp(t, dir, args...)
		if code != 2 || !strings.Contains(stderr, `the selection (--bench "^BenchmarkNoSuch$") matches no benchmark of the`) || strings.Contains(stderr, "overlaid") {
			t.Errorf("%s: exit %d, want 2 saying the selection matches nothing\n%s", args[0], code, stderr)
		}
	}
}

func TestABOfGoTestBenchmarks(t *testing.T) {
	dir, c := goRepo(t)
	out := filepath.Join(t.TempDir(), "ab")
	code, stdout, stderr := abApp(t, dir, "ab", "--base", c[0], "--head", c[1], "./work", "--forks", "4", "--warmup", "1x20ms", "--measure", "2x30ms", "--explain", "off", "--out", out)
	if code != 1 || !strings.Contains(stderr, "significant regression") {
		t.Fatalf("exit %d, want 1 for the 4× slower Work\n%s\n%s", code, stdout, stderr)
	}
	note := "lacks BenchmarkNew of example.com/abgo/work: its code is measured with the experiment's test files overlaid (new_test.go work_test.go)"
	if !strings.Contains(stdout, note) || !regexp.MustCompile(`\| Work(-\d+)? `).MatchString(stdout) || !regexp.MustCompile(`\| New(-\d+)? `).MatchString(stdout) {
		t.Errorf("the table lacks a benchmark or the overlay note:\n%s\n%s", stdout, stderr)
	}
	txt, err := os.ReadFile(filepath.Join(out, "ab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(txt), note) {
		t.Errorf("ab.txt lacks the overlay note:\n%s", txt)
	}
	// Both sides measured both benchmarks, forks interleaved.
	counts := map[string]int{}
	r := benchfmt.NewReader(bytes.NewReader(txt), "ab.txt")
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			counts[res.GetConfig("toolchain")+" "+regexp.MustCompile(`-\d+$`).ReplaceAllString(string(res.Name), "")]++
			if res.GetConfig("pkg") != "example.com/abgo/work" {
				t.Errorf("pkg %q", res.GetConfig("pkg"))
			}
		}
	}
	for _, k := range []string{"baseline Work", "experiment Work", "baseline New", "experiment New"} {
		if counts[k] != 8 {
			t.Errorf("%s: %d results, want 8 (4 forks × 2): %v", k, counts[k], counts)
		}
	}
	// As a duet: both test binaries of a round at once, each on its half
	// of the CPUs with -test.cpu the half's size.
	halves, err := engine.DuetCPUs(nil)
	if err != nil {
		return
	}
	out = filepath.Join(t.TempDir(), "duet")
	code, stdout, stderr = abApp(t, dir, "ab", "--base", c[0], "--head", c[1], "./work", "--duet", "--forks", "5", "--warmup", "1x20ms", "--measure", "2x30ms", "--explain", "off", "--out", out)
	if code != 1 || !strings.Contains(stdout, "mode: duet (--duet)") {
		t.Fatalf("duet: exit %d, want 1 for the 4× slower Work, in a duet\n%s\n%s", code, stdout, stderr)
	}
	name := fmt.Sprintf("Work-%d", len(halves[0]))
	if len(halves[0]) == 1 {
		name = "Work" // go test names a benchmark at -test.cpu 1 without the suffix
	}
	// Five pairs: the forks of a race build spread widely, and three
	// pairs matched by round (not by rank) leave the interval open.
	if !regexp.MustCompile(`\| ` + name + ` .*\*\*changed\*\* \(p[=<][0-9.]+ q[=<][0-9.]+, 5 pairs\)`).MatchString(stdout) {
		t.Errorf("duet: no Work row at -test.cpu %d changed by 5 pairs:\n%s", len(halves[0]), stdout)
	}
}

func TestNightlyOfGoTestBenchmarks(t *testing.T) {
	dir, c := goRepo(t)
	results := filepath.Join(t.TempDir(), "results")
	flags := []string{"--allow-unpinned", "--forks", "1", "--warmup", "0", "--measure", "3x20ms", "--results", results}
	// A plain run of the working tree, then one against the tag of the
	// first commit, which lacks BenchmarkNew.
	code, stdout, stderr := abApp(t, dir, append([]string{"nightly", "./work", "--anchor", "none"}, flags...)...)
	if code != 0 || !strings.Contains(stdout, "recorded "+filepath.Join(results, "nightly")) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := git(dir, "tag", "v0.1.0", c[0]); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = abApp(t, dir, append([]string{"nightly", "./work"}, flags...)...)
	if code == 2 || !strings.Contains(stderr, "its code is measured with the experiment's test files overlaid") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	runs, _ := filepath.Glob(filepath.Join(results, "nightly", "*", "*", "*", "*.txt"))
	if len(runs) != 2 {
		t.Fatalf("recorded runs %v, want 2", runs)
	}
	for _, r := range runs {
		txt, _ := os.ReadFile(r)
		if !strings.Contains(string(txt), "pkg: example.com/abgo/work") || !strings.Contains(string(txt), "\nWork-") && !strings.Contains(string(txt), "\nBenchmarkWork") {
			t.Errorf("%s lacks the package's benchmarks:\n%s", r, txt)
		}
	}
	readme, err := os.ReadFile(filepath.Join(results, "README.md"))
	if err != nil || !strings.Contains(string(readme), "Work") {
		t.Errorf("README %v:\n%s", err, readme)
	}
}

func TestListGoTestBenchmarks(t *testing.T) {
	dir := gobench(t)
	code, stdout, stderr := abApp(t, dir, "list", "./calc", "--bench", "Sizes/size=8|Skip", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{`"name": "BenchmarkSizes/size=8/alloc"`, `"name": "BenchmarkSizes/size=8/sum"`, `"pkg": "example.com/gobench/calc"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("list lacks %s:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "size=512") || strings.Contains(stdout, `"BenchmarkSkip"`) {
		t.Errorf("list shows a benchmark --bench does not select, or one that skips itself:\n%s", stdout)
	}
	if !strings.Contains(stderr, "BenchmarkSkip skipped itself") {
		t.Errorf("stderr does not say BenchmarkSkip skipped:\n%s", stderr)
	}
}

// TestRunGoTestHostile: results count only from a test binary that ends
// with go test's PASS and exit status 0 (a benchmark that prints its own
// result lines and exits 0 counts none), and a printed "--- FAIL:" line
// does not fail a benchmark that passed.
func TestRunGoTestHostile(t *testing.T) {
	dir := gobench(t)
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := abApp(t, dir, append([]string{"run", "./hostile", "--out", out}, quick...)...)
	if code != 1 || !strings.Contains(stderr, "FAILED BenchmarkExitZero fork 1") || strings.Contains(stderr, "FAILED BenchmarkPrintsFail") {
		t.Fatalf("exit %d, want 1 failing BenchmarkExitZero only\n%s\n%s", code, stdout, stderr)
	}
	count := map[string]int{}
	for name, lines := range results(t, filepath.Join(out, "bench.txt")) {
		count[strings.SplitN(name, "-", 2)[0]] += len(lines)
	}
	if count["ExitZero"] != 0 || count["PrintsFail"] != 2 {
		t.Errorf("results %v: want none of BenchmarkExitZero and the 2 measured of BenchmarkPrintsFail", count)
	}
}

// TestGoTestAllocsProfileIsExact: --prof allocs records every allocation
// (-test.memprofilerate=1), so the benchmark's own frame shows its bytes
// per op exactly, not a sampled estimate: 8 and 512 B/op, and one
// allocation per op of 512 B (two 8 B allocations share one 16 B block of
// the runtime's tiny allocator, one event in the profile).
func TestGoTestAllocsProfileIsExact(t *testing.T) {
	dir := gobench(t)
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := abApp(t, dir, append([]string{"run", "./calc", "--bench", "Sizes/size=(8|512)/alloc$", "--prof", "allocs", "--out", out}, quick...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	summary, _ := os.ReadFile(filepath.Join(out, "profiles", "summary.md"))
	frame := regexp.MustCompile("`example.com/gobench/calc.BenchmarkSizes.func1.1` \\| ([0-9.]+)B/op \\| [0-9.]+ % \\| ([0-9.]+) \\|")
	var got [][]string
	for _, sec := range strings.Split(string(summary), "## BenchmarkSizes/size=")[1:] {
		size, _, _ := strings.Cut(sec, "/")
		if m := frame.FindStringSubmatch(sec); m != nil {
			got = append(got, []string{"", size, m[1], m[2]})
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d frame lines of the two benchmarks in:\n%s", len(got), summary)
	}
	for _, m := range got {
		size, _ := strconv.ParseFloat(m[1], 64)
		bytes, _ := strconv.ParseFloat(m[2], 64)
		events, _ := strconv.ParseFloat(m[3], 64)
		if bytes < 0.99*size || bytes > 1.01*size || (size == 512 && (events < 0.99 || events > 1.01)) {
			t.Errorf("size %g: the benchmark's frame shows %g B/op and %g allocations/op\n%s", size, bytes, events, summary)
		}
	}
}

// TestBenchmarkNamesStayInsideAndApart: the files of a benchmark (its
// logs and profiles) stay inside --out whatever its name holds (.., a
// directory's own name), and two benchmarks never share one.
func TestBenchmarkNamesStayInsideAndApart(t *testing.T) {
	dir := gobench(t)
	top := t.TempDir()
	out := filepath.Join(top, "a", "b", "c", "run")
	code, stdout, stderr := abApp(t, dir, append([]string{"run", "./names", "--prof", "cpu", "--out", out}, quick...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(p, out+string(filepath.Separator)) {
			t.Errorf("%s is outside --out %s", p, out)
		}
		return nil
	})
	for _, kind := range []string{"*.fork1.log", "*.cpu.log"} {
		if logs, _ := filepath.Glob(filepath.Join(out, "logs", kind)); len(logs) != 7 {
			t.Errorf("%d %s logs for 7 benchmarks: %v", len(logs), kind, logs)
		}
	}
	var profiles []string
	filepath.WalkDir(filepath.Join(out, "profiles"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "cpu.pb.gz" {
			profiles = append(profiles, p)
		}
		return nil
	})
	if len(profiles) != 7 {
		t.Errorf("%d cpu profiles for 7 benchmarks: %v", len(profiles), profiles)
	}
}

// TestBenchSelectsAsGoTestDoes: for each pattern, the benchmarks run
// selects in a package are exactly those whose results
// `go test -run '^$' -bench PATTERN -benchtime 1x` reports: a benchmark
// that matches only the first levels of a longer pattern is not one.
func TestBenchSelectsAsGoTestDoes(t *testing.T) {
	dir := gobench(t)
	fixture := filepath.Join(dir, "levels")
	strs, err := exec.Command("go", "list", "-f", "{{.Dir}}", "strings").Output()
	if err != nil {
		t.Fatalf("go list strings: %v", err)
	}
	for _, pkg := range []struct {
		dir, pkg string
		patterns []string
	}{
		{fixture, ".", []string{"BenchmarkFoo/x", "Foo", "Foo/", "Foo$", "/x", "Bar/y$", "Deep/a", "Deep/a/1", "Deep/./2", "Deep/b/z", ".", "Deep|FooBar/y", "BenchmarkFoo/x/z"}},
		{strings.TrimSpace(string(strs)), "strings", []string{"BenchmarkRepeat/5x1$", "BenchmarkRepeat$"}},
	} {
		selectsAsGoTest(t, pkg.dir, pkg.pkg, pkg.patterns)
	}
}

// selectsAsGoTest compares, for each pattern, what gotest.Benchmarks
// selects in the package with what its test binary reports under that
// -test.bench at -test.benchtime=1x.
func selectsAsGoTest(t *testing.T, pkgDir, pkg string, patterns []string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pkg.test")
	if out, err := exec.Command("go", "-C", pkgDir, "test", "-c", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go test -c %s: %v\n%s", pkg, err, out)
	}
	result := regexp.MustCompile(`^(Benchmark\S*?)(-\d+)?\s+\d+\s+[0-9.]+ ns/op`)
	for _, pattern := range patterns {
		cmd := exec.Command(bin, "-test.run=^$", "-test.bench="+pattern, "-test.benchtime=1x", "-test.cpu=1")
		cmd.Dir = pkgDir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go test -bench %s: %v\n%s", pattern, err, out)
		}
		var want []string
		for line := range strings.SplitSeq(string(out), "\n") {
			if m := result.FindStringSubmatch(line); m != nil {
				want = append(want, m[1])
			}
		}
		pat, err := gotest.Split(pattern)
		if err != nil {
			t.Fatal(err)
		}
		l, err := gotest.Benchmarks(t.Context(), bin, pkgDir, pat, 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(l.Names, want) {
			t.Errorf("--bench %s selects %q; go test -bench runs %q", pattern, l.Names, want)
		}
	}
}

// TestABOfABaseWhoseTestsDoNotBuild: a base whose package does not build
// with its own test files, but does with the experiment's, is measured
// with them and said so, and is not also called unbuilt (it used to be
// "does not build: its benchmarks were not run", then measured).
func TestABOfABaseWhoseTestsDoNotBuild(t *testing.T) {
	needGit(t)
	gobench(t)
	dir := t.TempDir()
	write, gitT := repoTools(t, dir)
	gitT("init", "-q")
	write("go.mod", "module example.com/abbroken\n\ngo 1.24\n")
	write("work/work.go", "package work\n\n// Work spins.\nfunc Work(x uint64) uint64 { return x*31 + 7 }\n")
	write("work/work_test.go", "package work\n\nimport \"testing\"\n\nfunc BenchmarkWork(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\tsink = Work(undefined)\n\t}\n}\n")
	gitT("add", ".")
	gitT("commit", "-q", "-m", "tests that do not build")
	base := gitT("rev-parse", "HEAD")
	write("work/work_test.go", "package work\n\nimport \"testing\"\n\nvar sink uint64\n\nfunc BenchmarkWork(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\tsink = Work(sink)\n\t}\n}\n")
	gitT("commit", "-q", "-am", "tests fixed")
	head := gitT("rev-parse", "HEAD")
	code, stdout, stderr := abApp(t, dir, "ab", "--base", base, "--head", head, "./work", "--forks", "2", "--warmup", "0", "--measure", "2x20ms", "--out", filepath.Join(t.TempDir(), "ab"))
	if code == 2 || !strings.Contains(stdout, "its code is measured with the experiment's test files overlaid") {
		t.Fatalf("exit %d, want the base measured with the experiment's tests\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "benchmarks were not run") || strings.Contains(stderr, "did not build") {
		t.Errorf("the base is called unbuilt, and measured:\n%s\n%s", stdout, stderr)
	}
}

// TestBenchstatReadsBothFiles: benchstat itself puts a plain `go test
// -bench` file and benchctl's file of the same benchmark, converted by
// compare --format gotest, in one table (both columns, one sec/op header
// block); benchctl's own file beside the go test one is split by its keys.
func TestBenchstatReadsBothFiles(t *testing.T) {
	dir := gobench(t)
	plain := filepath.Join(t.TempDir(), "plain.txt")
	b := goTool(t, dir, "test", "-run", "^$", "-bench", "^BenchmarkSumN$", "-benchtime", "20ms", "-count", "3", "./calc")
	if err := os.WriteFile(plain, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := abApp(t, dir, "run", "./calc", "--bench", "^BenchmarkSumN$", "--forks", "1", "--warmup", "1x20ms", "--measure", "3x20ms", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, converted, stderr := abApp(t, dir, "compare", "--format", "gotest", filepath.Join(out, "bench.txt"))
	if code != 0 || strings.Contains(converted, "machine-id") || strings.Contains(converted, "# benchctl") || strings.Count(converted, "BenchmarkSumN") != 3 {
		t.Fatalf("compare --format gotest: exit %d\n%s\n%s", code, converted, stderr)
	}
	gotest := filepath.Join(t.TempDir(), "benchctl.txt")
	if err := os.WriteFile(gotest, []byte(converted), 0o644); err != nil {
		t.Fatal(err)
	}
	benchstat := func(files ...string) string {
		return goTool(t, "..", append([]string{"tool", "benchstat", "-filter", ".unit:sec/op"}, files...)...)
	}
	if s := benchstat(plain, gotest); !strings.Contains(s, "plain.txt") || !strings.Contains(s, "benchctl.txt") ||
		strings.Count(s, "SumN") != 1 || !strings.Contains(s, "vs base") {
		t.Errorf("benchstat of the go test file and the converted one is not one table:\n%s", s)
	}
	if s := benchstat(plain, filepath.Join(out, "bench.txt")); strings.Count(s, "SumN") != 2 {
		t.Errorf("benchctl's own file beside the go test one: want two tables (its keys split them), got:\n%s", s)
	}
}

// TestGoTestDefaults: without --warmup or --measure, a go test benchmark's
// forks measure engine.GoTestMeasure with no warmup count, as the run's
// file says, and the second fork runs every count at the b.N the first
// found (its median), not ramping again.
func TestGoTestDefaults(t *testing.T) {
	dir := gobench(t)
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := abApp(t, dir, "run", "./setup", "--forks", "2", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	txt := string(data)
	if want := fmt.Sprintf("warmup=%s measure=%s ", engine.GoTestWarmup, engine.GoTestMeasure); !strings.Contains(txt, want) {
		t.Errorf("bench.txt lacks %q:\n%s", want, txt)
	}
	ns := map[string][]int64{}
	for _, m := range regexp.MustCompile(`fork=(\d+) iter=\d+ mode=avgt go-test b\.N=(\d+)`).FindAllStringSubmatch(txt, -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		ns[m[1]] = append(ns[m[1]], n)
	}
	if len(ns["1"]) != engine.GoTestMeasure.Count || len(ns["2"]) != engine.GoTestMeasure.Count {
		t.Fatalf("counts of the forks: %v, want %d each:\n%s", ns, engine.GoTestMeasure.Count, txt)
	}
	first := slices.Sorted(slices.Values(ns["1"]))
	for _, n := range ns["2"] {
		if n != first[len(first)/2] {
			t.Errorf("fork 2 ran b.N = %d, want fork 1's median %d (of %v)", n, first[len(first)/2], first)
		}
	}
}
