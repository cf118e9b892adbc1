package benchctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/chart"
	"github.com/ledgerbench/ledgerbench/internal/servecmd"
)

func benchctl(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir()) // a run lock of the test's own
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	a := &app{registry: harness.Default, stdout: &out, stderr: &errb, executable: exe,
		header: func(h *report.Header) { h.Machine = "testhost" }, commands: servecmd.Commands, charts: testCharts}
	code = a.main(context.Background(), args)
	return code, out.String(), errb.String()
}

// testCharts are the charts of package charts (which imports this one).
var testCharts = &Charts{Series: chart.WriteSeriesChart, Change: chart.WriteChangeChart}

// TestChartsOnlyWhereDrawn: a program without Config.Charts refuses
// compare --chart, saying how to opt in.
func TestChartsOnlyWhereDrawn(t *testing.T) {
	var out, errb bytes.Buffer
	a := &app{registry: harness.Default, stdout: &out, stderr: &errb}
	code := a.main(t.Context(), []string{"compare", "--col", "toolchain", "--chart", filepath.Join(t.TempDir(), "c.svg"), "../results/cache/readrange-ab/ab.txt"})
	if code != 2 || !strings.Contains(errb.String(), "draws no charts (a program opts in with benchctl.Config{Charts: charts.Draw}") {
		t.Errorf("exit %d\n%s", code, errb.String())
	}
}

func TestBadInputExitsTwoAndWritesNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--suite", "nosuch"}, `--suite nosuch: unknown suite (suites: clitest, all)`},
		{[]string{"run", "--suite", "clitest", "--bench", "NoSuchBench"}, `--bench NoSuchBench: matches no benchmark of suite clitest (benchmarks: BenchmarkAlloc`},
		{[]string{"run", "--suite", "clitest", "--bench", "("}, "--bench (: error parsing regexp"},
		{[]string{"run", "--suite", "clitest", "-p", "nosuch=1"}, `-p nosuch: unknown parameter (parameters of the selected benchmarks: even, kind, size)`},
		{[]string{"run", "--suite", "clitest", "-p", "size=big"}, `parameter size: value "big" is not a valid int`},
		{[]string{"run", "--suite", "clitest", "-p", "size"}, `bad parameter "size": want name=v1,v2`},
		{[]string{"run", "--suite", "clitest", "--warmup", "3y1s"}, `bad iteration spec "3y1s"`},
		{[]string{"run", "--suite", "clitest", "--measure", "5x0ops"}, `op count "0" must be a positive integer`},
		{[]string{"run", "--suite", "clitest", "--forks", "-1"}, "--forks -1: must be 0 (in process) or more"},
		{[]string{"run", "--suite", "clitest", "--forks", "two"}, `invalid argument "two" for "--forks"`},
		{[]string{"run", "--suite", "clitest", "--mode", "fast"}, `unknown mode "fast" (valid: avgt, thrpt, sample, ss)`},
		{[]string{"run", "--suite", "clitest", "--out", filepath.Join(file, "sub")}, "--out " + filepath.Join(file, "sub")},
		{[]string{"run", "stray-arg"}, `package stray-arg is not in std`},
		{[]string{"run", "--suite", "clitest", "-p", "kind=huge"}, `parameter kind: unknown value "huge" (valid: b, a)`},
		{[]string{"run", "--suite", ""}, `--suite is empty`},
		{[]string{"run", "--suite", "clitest", "-p", "even=3"}, `parameter even: value "3": must be even`},
		{[]string{"run", "--suite", "clitest", "--cooldown", "NaN"}, `--cooldown NaN: must be a finite number`},
		{[]string{"run", "--suite", "clitest", "--shard", "3/2"}, `--shard "3/2": share 3 of 2: want 1 ≤ I ≤ N`},
		{[]string{"run", "--suite", "clitest", "--shard", "half"}, `--shard "half": want I/N`},
		{[]string{"run", "--suite", "clitest", "--shard", "6/6"}, `--shard: share 6/6 holds no case: the 6 selected cases form 5 comparison group(s), fewer than 6 shares`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"list", "--suite", "nosuch"}, `--suite nosuch: unknown suite`},
		{[]string{"run", "--suite", "clitest", "--prof", "cpu,heap"}, `--prof: unknown profiler "heap" (valid: cpu, offcpu, block, mutex, allocs, instructions, perf)`},
		{[]string{"run", "--suite", "clitest", "--prof", "cpu", "--forks", "0"}, "--prof: profilers run in their own forks"},
		{[]string{"run", "--suite", "clitest", "--precision", "fine"}, `--precision "fine": want a percentage above 0 and below 100`},
		{[]string{"run", "--suite", "clitest", "--precision", "150%"}, `--precision "150%": want a percentage`},
		{[]string{"run", "--suite", "clitest", "--precision", "1%", "--forks", "1"}, "--forks 1: a precision needs at least 2 forks"},
		{[]string{"run", "--suite", "clitest", "--precision", "1%", "--budget", "0s"}, "--budget 0s: want at least 1s"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := tc.args
		if tc.args[0] == "run" && !strings.Contains(strings.Join(args, " "), "--out") {
			args = append(args, "--out", out)
		}
		code, _, stderr := benchctl(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("benchctl %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("benchctl %s: created %s on bad input", strings.Join(tc.args, " "), out)
		}
	}
}

func TestList(t *testing.T) {
	code, stdout, _ := benchctl(t, "list", "--suite", "clitest")
	for _, want := range []string{"BenchmarkNoop", "BenchmarkAlloc", "size=64,1024 (int)", "BenchmarkGroup", "all,clitest", "github.com/ledgerbench/ledgerbench/benchctl"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("list lacks %q:\n%s", want, stdout)
		}
	}
	if code != 0 || strings.Contains(stdout, "CliPanic") {
		t.Errorf("list --suite clitest: exit %d, lists a benchmark outside the suite:\n%s", code, stdout)
	}
	code, stdout, _ = benchctl(t, "--version")
	if code != 0 || !strings.Contains(stdout, report.Version) {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
}

func TestRunWritesResults(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := benchctl(t, "run", "--suite", "clitest", "--bench", "Noop|Alloc", "-p", "size=64",
		"--forks", "1", "--warmup", "1x20ms", "--measure", "2x20ms", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	txt, err := os.ReadFile(filepath.Join(out, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nBenchmarkNoop-", "\nBenchmarkAlloc/size=64-", "host-pinned: no", "machine: testhost", "# benchctl: fork=1 iter=1"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("bench.txt lacks %q:\n%s", want, txt)
		}
	}
	if strings.Contains(string(txt), "size=1024") {
		t.Error("-p size=64 did not replace the default values")
	}
	if _, err := os.Stat(filepath.Join(out, "bench.json")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(stdout, "BenchmarkAlloc/size=64") || !strings.Contains(stderr, "[2/2]") {
		t.Errorf("console output:\n%s\n%s", stdout, stderr)
	}
}

func TestRunFailureKeepsResultsAndExitsOne(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := benchctl(t, "run", "--bench", "Noop|CliPanic", "--forks", "1", "--warmup", "0", "--measure", "2x20ms", "--out", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "FAILED BenchmarkCliPanic fork 1: op: panic: cli-boom") {
		t.Errorf("stderr lacks the failure:\n%s", stderr)
	}
	txt, _ := os.ReadFile(filepath.Join(out, "bench.txt"))
	if strings.Count(string(txt), "\nBenchmarkNoop-") != 2 || !strings.Contains(string(txt), "# benchctl: FAILED BenchmarkCliPanic") {
		t.Errorf("bench.txt does not keep the good results and the failure:\n%s", txt)
	}
}

func TestInProcessWarns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := benchctl(t, "run", "--suite", "clitest", "--bench", "Noop", "--forks", "0", "--warmup", "0", "--measure", "1x10ms", "--out", out)
	if code != 0 || !strings.Contains(stderr, "WARNING: --forks 0") || !strings.Contains(stderr, "no --timeout (a hung op hangs the run)") {
		t.Errorf("exit %d, stderr %q: want 0 and the in-process warning", code, stderr)
	}
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	var sa, sb strings.Builder
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&sa, "BenchmarkInsert/impl=skiplist 100 %d ns/op\nBenchmarkInsert/impl=paged 100 %d ns/op\n", 600+i, 350+i)
		fmt.Fprintf(&sb, "BenchmarkInsert/impl=skiplist 100 %d ns/op\n", 610+i)
	}
	os.WriteFile(a, []byte(sa.String()), 0o644)
	os.WriteFile(b, []byte(sb.String()), 0o644)
	code, stdout, stderr := benchctl(t, "compare", "--col", "/impl", "--format", "md", "--names", "Master,This change", a)
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(stdout), " "), "| Benchmark | Master | This change | Change |") || !strings.Contains(stdout, "-41.5 %") {
		t.Errorf("compare --col /impl --format md: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = benchctl(t, "compare", a, b)
	if code != 0 || !strings.Contains(stdout, "Insert/impl=skiplist") || !strings.Contains(stdout, "+1.66%") || !strings.Contains(stdout, "612.5n         +1.66%") {
		t.Errorf("compare a b: exit %d\n%s", code, stdout)
	}
	for _, bad := range [][]string{{"compare"}, {"compare", "--format", "html", a}, {"compare", filepath.Join(dir, "missing.txt")}, {"compare", "--min-change", "-1", a}, {"compare", "--min-change", "100", a}} {
		if code, _, _ := benchctl(t, bad...); code != 2 {
			t.Errorf("benchctl %v: exit %d, want 2", bad, code)
		}
	}
}

// TestGroupThreadsRoundUp: --threads that is not a multiple of a group's
// size runs whole group instances, as JMH does, instead of failing the
// fork after other results were written.
func TestGroupThreadsRoundUp(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := benchctl(t, "run", "--suite", "clitest", "--bench", "^BenchmarkGroup$", "--threads", "3",
		"--forks", "1", "--warmup", "0", "--measure", "1x10ms", "--out", out)
	txt, _ := os.ReadFile(filepath.Join(out, "bench.txt"))
	if code != 0 || !strings.Contains(string(txt), "goroutines=4") {
		t.Errorf("exit %d\n%s\n%s", code, stderr, txt)
	}
}

// TestNothingRegistered: a program that calls Main without registering a
// benchmark gets a one-line usage error saying what to do.
func TestNothingRegistered(t *testing.T) {
	for _, args := range [][]string{{"list"}, {"run", "--quick"}} {
		var out, errb bytes.Buffer
		a := &app{name: "empty", registry: &harness.Registry{}, stdout: &out, stderr: &errb}
		code := a.main(context.Background(), args)
		want := "empty: empty declares no benchmarks (no package of it calls harness.Register): name your module's packages to measure their testing.B benchmarks (`empty " + args[0] + " ./...`)"
		if code != 2 || !strings.HasPrefix(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// TestCompareAcrossConfigurations: --table "" (benchstat's) lines up a go
// test file and a benchctl file, whose file-level keys differ, in one
// table (it used to fall back to .config and split them).
func TestCompareAcrossConfigurations(t *testing.T) {
	dir := t.TempDir()
	gt, bc := filepath.Join(dir, "go.txt"), filepath.Join(dir, "benchctl.txt")
	os.WriteFile(gt, []byte("pkg: x\nBenchmarkAdd/impl=mutex-2 100 27 ns/op\nBenchmarkAdd/impl=mutex-2 100 28 ns/op\n"), 0o644)
	os.WriteFile(bc, []byte("pkg: x\nmachine-id: m\ncommit: c\nBenchmarkAdd/impl=mutex-2 100 26 ns/op\nBenchmarkAdd/impl=mutex-2 100 27 ns/op\n"), 0o644)
	code, stdout, stderr := benchctl(t, "compare", "--table", "", "go="+gt, "benchctl="+bc)
	if code != 0 || strings.Count(stdout, "Add/impl=mutex-2") != 1 || !strings.Contains(stdout, "vs base") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestCompareJSON: --format json is the verdicts of the Markdown table as
// one object of the documented schema: each column's summary, the change
// and verdict of the columns after the first, nulls where an interval is
// open, and the headline's tally.
func TestCompareJSON(t *testing.T) {
	dir := t.TempDir()
	base, head := filepath.Join(dir, "base.txt"), filepath.Join(dir, "head.txt")
	var a, b strings.Builder
	for i := range 8 {
		fmt.Fprintf(&a, "BenchmarkGet-2 100 %d ns/op\nBenchmarkOne-2 100 5 ns/op\n", 100+i%3)
		fmt.Fprintf(&b, "BenchmarkGet-2 100 %d ns/op\n", 200+i%3)
	}
	b.WriteString("BenchmarkOne-2 100 5 ns/op\n") // one sample: no interval
	os.WriteFile(base, []byte(a.String()), 0o644)
	os.WriteFile(head, []byte(b.String()), 0o644)
	code, stdout, stderr := benchctl(t, "compare", "--format", "json", "base="+base, "head="+head)
	var v compare.Verdicts
	if err := json.Unmarshal([]byte(stdout), &v); code != 0 || err != nil || v.Schema != compare.JSONSchema {
		t.Fatalf("exit %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	rows := map[string]compare.VerdictRow{}
	for _, r := range v.Rows {
		rows[r.Benchmark+"@"+r.Column] = r
	}
	// Both ran at GOMAXPROCS 2: named without the -2, which the row says.
	get, one := rows["Get@head"], rows["One@head"]
	if get.Verdict != "changed" || get.Against != "base" || get.Change == nil || get.Change.Ratio < 1.9 || get.Change.Ratio > 2.1 || rows["Get@base"].Change != nil || get.GOMAXPROCS != 2 {
		t.Errorf("Get: %+v (change %+v)", get, get.Change)
	}
	if one.N != 1 || one.Verdict == "changed" || (one.Change != nil && one.Change.Hi != nil) {
		t.Errorf("One, a single sample: %+v (change %+v)", one, one.Change)
	}
	if v.Tally.Slower != 1 || v.Tally.Rows != 2 || !strings.HasPrefix(v.Headline, "1 of 2 time comparisons changed") {
		t.Errorf("tally %+v, headline %q", v.Tally, v.Headline)
	}
}

// TestRunAnswersWithThePullRequestTable: a run with an implementation
// axis prints its pull-request tables first and the JMH table only with
// --jmh (always into DIR/table.txt).
func TestRunAnswersWithThePullRequestTable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := benchctl(t, "run", "--suite", "clitest", "--bench", "Noop|Enum", "--forks", "2", "--warmup", "0", "--measure", "2x10ms", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The answer first; the JMH table in DIR/table.txt, printed with --jmh.
	i := strings.Index(stdout, "## /kind against b")
	if i < 0 || strings.Contains(stdout, "| BenchmarkEnum/kind=b/even=2") || !strings.Contains(stdout, "(JMH's table): "+filepath.Join(out, "table.txt")+" (--jmh prints it)") {
		t.Fatalf("no pull-request table first, or the JMH table printed without --jmh:\n%s", stdout)
	}
	if table, err := os.ReadFile(filepath.Join(out, "table.txt")); err != nil || !strings.Contains(string(table), "| BenchmarkEnum/kind=b/even=2") {
		t.Errorf("table.txt (%v):\n%s", err, table)
	}
	pr := stdout[i:]
	if code, withJMH, stderr := benchctl(t, "run", "--suite", "clitest", "--bench", "Enum", "--forks", "2", "--warmup", "0", "--measure", "1x10ms", "--jmh",
		"--out", filepath.Join(t.TempDir(), "jmh")); code != 0 || !regexp.MustCompile(`(?s)## /kind against b.*## Every case \(JMH's table\).*\| BenchmarkEnum/kind=b/even=2`).MatchString(withJMH) {
		t.Errorf("--jmh: exit %d, want the JMH table after the pull-request table\n%s\n%s", code, withJMH, stderr)
	}
	// The declared baseline is the first column, though it sorts after a;
	// the benchmark without the axis has its own table; the samples are forks.
	if !regexp.MustCompile(`\| Benchmark +\| +b +\| +a +\| +Change +\| +Verdict +\| +Detectable +\|`).MatchString(pr) {
		t.Errorf("the baseline b is not the first column:\n%s", pr)
	}
	if strings.Contains(pr, "no benchmark in common") {
		t.Errorf("the floor's own table counts as a column:\n%s", pr)
	}
	for _, want := range []string{"of the benchmarks without /kind (not compared)", "| Noop", "samples: one per fork", "2 pairs", "time comparisons changed"} {
		if !strings.Contains(pr, want) {
			t.Errorf("the pull-request table lacks %q:\n%s", want, pr)
		}
	}
}

func TestCalibrate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cal")
	code, stdout, stderr := benchctl(t, "calibrate", "--suite", "clitest", "--bench", "Enum", "--pair", "kind=b,a",
		"--trials", "3", "--group", "3", "--warmup", "0", "--measure", "2x5ms", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Side B ran kind=a where side A ran kind=b, round by round.
	for _, want := range []string{"# Calibration on machine", "mode interleaved:",
		"## A known change: BenchmarkEnum/kind=b/even=2 (A) against BenchmarkEnum/kind=a/even=2 (B)",
		"| rounds | detected, ab | detected, unpaired |", "\n| 3 | ", "\n| 6 | ", "rounds for 90 % power"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("calibration lacks %q:\n%s", want, stdout)
		}
	}
	js, err := os.ReadFile(filepath.Join(out, "calibration.json"))
	if err != nil || !strings.Contains(string(js), `"Trials": 3`) || !strings.Contains(string(js), `"Mode": "interleaved"`) {
		t.Errorf("calibration.json: %v\n%s", err, js)
	}
	txt, _ := os.ReadFile(filepath.Join(out, "aa.txt"))
	if strings.Count(string(txt), "toolchain: ") < 2 || strings.Count(string(txt), "\nBenchmarkEnum/kind=b/even=2-") != 9*2 ||
		strings.Count(string(txt), "\nBenchmarkEnum/kind=a/even=2-") != 9*2 {
		t.Errorf("aa.txt does not hold 9 forks × 2 iterations of kind=b on A and of kind=a on B:\n%s", txt)
	}
	// The A/A of both cases: per benchmark, overall and the suite.
	out = filepath.Join(t.TempDir(), "aa")
	code, stdout, stderr = benchctl(t, "calibrate", "--suite", "clitest", "--bench", "Enum",
		"--trials", "3", "--group", "3", "--warmup", "0", "--measure", "2x5ms", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// 3 forks a side can never give a U-test p < 0.1: no fork-level
	// false positive.
	for _, want := range []string{"| ab: changed | ab: rejected | fork-level false positives |", "| BenchmarkEnum/kind=b/even=2 | ",
		"The suite as a whole", "across its 2 rows", "| shared |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("A/A calibration lacks %q:\n%s", want, stdout)
		}
	}
	// On these recorded rounds, calibrate decides as ab's table does.
	calibrateAgreesWithAB(t, filepath.Join(out, "aa.txt"))
	allRow := regexp.MustCompile(`(?m)^\| \*\*all\*\* .*$`).FindString(stdout)
	all := strings.Split(allRow, "|")
	if len(all) < 5 || strings.TrimSpace(all[4]) != "0.0 % [0.0–45.9] (0 of 6)" {
		t.Errorf("overall fork-level false positives %q, want none of 6", all)
	}
	// Reported again from its raw results, the same figures.
	again := filepath.Join(t.TempDir(), "again")
	code, stdout, stderr = benchctl(t, "calibrate", "--from", filepath.Join(out, "aa.txt"), "--group", "3", "--out", again)
	if code != 0 || !strings.Contains(stdout, allRow) || !strings.Contains(stdout, "mode interleaved") {
		t.Errorf("calibrate --from: exit %d, want the row %q\n%s\n%s", code, allRow, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(again, "calibration.json")); err != nil {
		t.Error(err)
	}
	// A fork order on one line past benchfmt's 64 KiB, as calibrate wrote
	// it before splitting it, is read past.
	txt, _ = os.ReadFile(filepath.Join(out, "aa.txt"))
	long := bytes.Replace(txt, []byte("\n"), []byte("\n# benchctl: A/B fork order (round:case:sides): "+strings.Repeat("1:BenchmarkX:A,B ", 5000)+"\n"), 1)
	longPath := filepath.Join(t.TempDir(), "aa.txt")
	if err := os.WriteFile(longPath, long, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := benchctl(t, "calibrate", "--from", longPath, "--group", "3"); code != 0 || !strings.Contains(stdout, allRow) {
		t.Errorf("calibrate --from a file with an 85 KB comment line: exit %d, want the row %q\n%s\n%s", code, allRow, stdout, stderr)
	}
	// Replayed as ab --detect: a row per benchmark, in the JSON too.
	code, stdout, stderr = benchctl(t, "calibrate", "--from", filepath.Join(out, "aa.txt"), "--group", "3", "--detect", "50%", "--out", again)
	if code != 0 || !strings.Contains(stdout, "## Replayed as ab --detect 50%") || !strings.Contains(stdout, "| BenchmarkEnum/kind=b/even=2 | ") ||
		strings.Count(stdout, "| BenchmarkEnum/kind=") != 4 {
		t.Errorf("calibrate --from --detect: exit %d, want the replay's table with both cases\n%s\n%s", code, stdout, stderr)
	}
	if js, _ := os.ReadFile(filepath.Join(again, "calibration.json")); !strings.Contains(string(js), `"Adaptive": {`) {
		t.Errorf("calibration.json lacks the replay:\n%s", js)
	}
	if code, _, stderr := benchctl(t, "calibrate", "--from", filepath.Join(again, "calibration.json"), "--out", again); code != 2 || !strings.Contains(stderr, "--from:") {
		t.Errorf("calibrate --from a JSON file: exit %d, %q; want 2", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--trials", "0"}, "want at least 1 comparison of at least 3 forks a side"},
		{[]string{"--trials", "4000", "--group", "3"}, "at most 10000"},
		{[]string{"--pair", "kind=b"}, "want PARAM=BASE,CHANGED"},
		{[]string{"--pair", "kind=b,z"}, "the selected cases lack kind=b or kind=z"},
		{[]string{"--forks", "3"}, "--forks and --precision do not apply to calibrate"},
		{[]string{"--precision", "1%"}, "--forks and --precision do not apply to calibrate"},
		{[]string{"--plant", "0"}, `--plant "0": want a percentage above 0 and at most 100`},
		{[]string{"--plant", "150%"}, `--plant "150%": want a percentage`},
		{[]string{"--plant", "abc"}, `--plant "abc": want a percentage`},
		{[]string{"--plant", "2%", "--pair", "kind=b,a"}, "--pair and --plant: one known change at a time"},
		{[]string{"--detect", "0"}, `--detect "0": want a percentage above 0 and below 100`},
		{[]string{"--detect", "x%"}, `--detect "x%": want a percentage`},
	} {
		args := append([]string{"calibrate", "--suite", "clitest", "--bench", "Enum", "--out", filepath.Join(t.TempDir(), "x")}, tc.args...)
		if code, _, stderr := benchctl(t, args...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("calibrate %v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestCalibratePlanted: --plant slows side B by a known fraction of any
// benchmark's time, measured inside its windows, and reports it as a
// known change of each case against itself; --from reads the plant back
// from the results file.
func TestCalibratePlanted(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cal")
	code, stdout, stderr := benchctl(t, "calibrate", "--suite", "clitest", "--bench", "^BenchmarkEnum$", "-p", "kind=b", "--plant", "50%",
		"--trials", "3", "--group", "3", "--warmup", "0", "--measure", "2x20ms", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	const heading = "## A known change: BenchmarkEnum/kind=b/even=2, side B planted +50 %"
	if !strings.Contains(stdout, heading) {
		t.Errorf("calibration lacks %q:\n%s", heading, stdout)
	}
	// The plant is relative to each window's own ops, but the two sides'
	// ops run at different moments: under the -race suite's load 9
	// rounds of 20 ms windows measured +104 % (and +132 % of 5 ms).
	// TestPlantedSlowdownIsMeasured checks the plant's arithmetic; here
	// the band asks that it reached side B alone, as a fraction: on
	// both sides it reads about 0, on A about -33 %, taken as a
	// percentage some +5000 %.
	m := regexp.MustCompile(`All rounds together: \+([0-9.]+) %`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no change over all rounds:\n%s", stdout)
	}
	if got, _ := strconv.ParseFloat(m[1], 64); got < 25 || got > 200 {
		t.Errorf("a planted +50 %% measured as +%g %%", got)
	}
	// 9 rounds (3 comparisons of 3) of 2 iterations a side: 18 pairs
	// of iterations, whose correlation is a number in [-1, 1].
	m = regexp.MustCompile(`the two sides' iterations correlate (-?[0-9.]+) \(18 pairs;`).FindStringSubmatch(stdout)
	if m == nil {
		t.Errorf("no shared noise of 18 pairs:\n%s", stdout)
	} else if got, _ := strconv.ParseFloat(m[1], 64); got < -1 || got > 1 {
		t.Errorf("iterations correlate %g", got)
	}
	txt, _ := os.ReadFile(filepath.Join(out, "aa.txt"))
	if !strings.Contains(string(txt), "\n# benchctl: planted=0.5: ") {
		t.Errorf("aa.txt does not record the plant:\n%.2000s", txt)
	}
	again := filepath.Join(t.TempDir(), "again")
	code, stdout, stderr = benchctl(t, "calibrate", "--from", filepath.Join(out, "aa.txt"), "--group", "3", "--out", again)
	if code != 0 || !strings.Contains(stdout, heading) {
		t.Errorf("calibrate --from a planted run: exit %d, want %q\n%s\n%s", code, heading, stdout, stderr)
	}
	code, stdout, stderr = benchctl(t, "calibrate", "--from", filepath.Join(out, "aa.txt"), "--group", "3", "--detect", "20%", "--out", again)
	if code != 0 || !strings.Contains(stdout, "| benchmark | detected | refused |") || !strings.Contains(stdout, "| BenchmarkEnum/kind=b/even=2 | ") {
		t.Errorf("calibrate --from a planted run --detect: exit %d, want the replay's detections\n%s\n%s", code, stdout, stderr)
	}
}

// TestInterruptedCalibrateWritesNoReport: a calibration stopped midway
// (SIGINT cancels the command's context) keeps its raw aa.txt but writes
// no calibration.md or .json, whose rates would pass for a complete run.
func TestInterruptedCalibrateWritesNoReport(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	exe, _ := os.Executable()
	out := filepath.Join(t.TempDir(), "cal")
	var stdout, stderr bytes.Buffer
	a := &app{registry: harness.Default, stdout: &stdout, stderr: &stderr, executable: exe}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	code := a.main(ctx, []string{"calibrate", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--trials", "100", "--group", "5",
		"--warmup", "0", "--measure", "1x20ms", "--out", out})
	if code != 1 || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("exit %d, want 1 saying it was interrupted\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "aa.txt")); err != nil {
		t.Errorf("the raw results of the forks that ran are gone: %v", err)
	}
	for _, f := range []string{"calibration.md", "calibration.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("an interrupted calibration wrote %s", f)
		}
	}
}

// TestOutHoldingAnEarlierRunIsRefused: --out naming a directory that
// holds an earlier run's results is bad input, and the earlier run is
// left as it was.
func TestOutHoldingAnEarlierRunIsRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"run", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--forks", "1", "--warmup", "0", "--measure", "1x10ms", "--out", out}
	if code, _, stderr := benchctl(t, args...); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	before, _ := os.ReadFile(filepath.Join(out, "bench.txt"))
	code, _, stderr := benchctl(t, args...)
	if code != 2 || !strings.Contains(stderr, "holds the results of an earlier run") {
		t.Errorf("second run into the same --out: exit %d, want 2\n%s", code, stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(out, "bench.txt")); !bytes.Equal(before, after) {
		t.Error("the earlier run's bench.txt was replaced")
	}
}

// TestInstalledElsewhereRunsNothingByDefault: a program whose registered
// benchmarks belong to another module (Config.Home), run from a tree that
// is not that module, measures them only when --suite or --bench asks,
// and otherwise says how to measure the user's own; a default --out in /
// is refused.
func TestInstalledElsewhereRunsNothingByDefault(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	exe, _ := os.Executable()
	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		a := &app{registry: harness.Default, stdout: &stdout, stderr: &stderr, executable: exe, dir: t.TempDir(), home: "example.com/elsewhere"}
		return a.main(context.Background(), args), stderr.String()
	}
	out := func() string { return filepath.Join(t.TempDir(), "o") }
	if code, stderr := run("run", "--quick", "--out", out()); code != 2 || !strings.Contains(stderr, "name their packages") || !strings.Contains(stderr, "pass --suite") {
		t.Errorf("a default run outside the home module: exit %d\n%s", code, stderr)
	}
	if code, stderr := run("run", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--forks", "1", "--warmup", "0", "--measure", "1x10ms", "--out", out()); code != 0 {
		t.Errorf("--suite asked for: exit %d\n%s", code, stderr)
	}
	t.Chdir("/")
	if code, stderr := run("run", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--quick"); code != 2 || !strings.Contains(stderr, "name the output directory with --out") {
		t.Errorf("a default --out in /: exit %d\n%s", code, stderr)
	}
}

// TestInProcessRunSaysItWasInterrupted: a signal during the last
// benchmark of an in-process run (--forks 0) ends it with exit 1 saying
// it was interrupted, not 0 as if complete.
func TestInProcessRunSaysItWasInterrupted(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	var stdout, stderr bytes.Buffer
	a := &app{registry: harness.Default, stdout: &stdout, stderr: &stderr}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	code := a.main(ctx, []string{"run", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--forks", "0", "--warmup", "0",
		"--measure", "3x400ms", "--out", filepath.Join(t.TempDir(), "o")})
	if code != 1 || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("exit %d, want 1 saying it was interrupted\n%s", code, stderr.String())
	}
}

// TestRaceBuildIsRecorded: a run made under GOFLAGS=-race (with which go
// test benchmarks are built) says so in its header, and its env-id is not
// a plain build's, so a nightly series marks the change instead of
// alarming on a 36× "regression".
func TestRaceBuildIsRecorded(t *testing.T) {
	runWith := func(goflags string) string {
		t.Setenv("GOFLAGS", goflags)
		out := filepath.Join(t.TempDir(), "o")
		if code, _, stderr := benchctl(t, "run", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--forks", "1", "--warmup", "0", "--measure", "1x10ms", "--out", out); code != 0 {
			t.Fatalf("GOFLAGS=%s: exit %d\n%s", goflags, code, stderr)
		}
		b, _ := os.ReadFile(filepath.Join(out, "bench.txt"))
		return string(b)
	}
	env := regexp.MustCompile(`(?m)^env-id: (\S+)$`)
	plain, race := runWith("-buildvcs=false"), runWith("-buildvcs=false -race")
	if !regexp.MustCompile(`(?m)^build-flags: .*GOFLAGS=-race$`).MatchString(race) {
		t.Errorf("no build-flags naming GOFLAGS=-race:\n%s", race)
	}
	if e1, e2 := env.FindStringSubmatch(plain), env.FindStringSubmatch(race); e1 == nil || e2 == nil || e1[1] == e2[1] {
		t.Errorf("env-ids %v and %v: a -race build must have its own", e1, e2)
	}
}

// TestRunUntilDecided: run --until-decided looks at the pull-request
// table's rows after every fork from the third, gives forks only to the
// cases of undecided rows until --budget is spent, decides them by the
// anytime-valid test, and says which stayed undecided. The floor (Noop)
// is compared with nothing: it gets the first 3 forks only. (The first
// rounds take about 10 s under -race on 2 CPUs: the budget leaves room.)
func TestRunUntilDecided(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := benchctl(t, "run", "--suite", "clitest", "--bench", "Noop|Enum", "--until-decided", "--budget", "25s",
		"--warmup", "0", "--measure", "2x10ms", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "confidence sequence (anytime-valid") {
		t.Errorf("the pull-request table does not say its verdicts are anytime-valid:\n%s", stdout)
	}
	m := regexp.MustCompile(`--until-decided: (\d) of 3 cases decided in`).FindStringSubmatch(stderr)
	if m == nil || m[1] == "0" {
		t.Fatalf("stderr does not count the decided cases, the floor among them:\n%s", stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	forks := func(name string) int { // 2 result lines a fork
		return len(regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(name)+`(-\d+)?\s`).FindAll(data, -1)) / 2
	}
	if n := forks("BenchmarkNoop"); n != 3 {
		t.Errorf("the floor ran %d forks, want the first 3", n)
	}
	// A compared case stops at the first 3 forks only when they decide
	// it; one undecided at the end got more (the budget allows them),
	// and one decided after more was undecided at the first look (CI's
	// -race run once decided it at the 4th).
	undecided := strings.Contains(stderr, "undecided (their rows say unknown")
	if n := forks("BenchmarkEnum/kind=a/even=2"); n < 3 || undecided && n == 3 {
		t.Errorf("the compared case ran %d forks; undecided at the end %v: want the first 3, and more when they left it undecided\n%s", n, undecided, stderr)
	}
}

// TestRunQuickDecides: run --quick adds forks until its large changes
// are decided, and says so; --quick --until-decided=false is the fixed
// design.
func TestRunQuickDecides(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := benchctl(t, "run", "--suite", "clitest", "--bench", "Noop|Enum", "--quick", "--budget", "25s", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "confidence sequence (anytime-valid") || !strings.Contains(stderr, "of 3 cases decided in") ||
		!strings.Contains(stderr, "waiting for changes of 20 % or more") {
		t.Errorf("run --quick does not decide its rows anytime-valid, waiting for the large changes:\n%s\n%s", stdout, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "forks=3 ") {
		t.Errorf("run --quick does not start from 3 forks:\n%s", data)
	}
	code, stdout, stderr = benchctl(t, "run", "--suite", "clitest", "--bench", "Noop|Enum", "--quick", "--until-decided=false", "--out", out+"2")
	if code != 0 || strings.Contains(stderr, "--until-decided") || strings.Contains(stdout, "anytime-valid") {
		t.Errorf("run --quick --until-decided=false: exit %d, want the fixed design:\n%s\n%s", code, stdout, stderr)
	}
}

// TestQuickDecidesUnlessForksAreAsked: which run command lines give
// forks until decided.
func TestQuickDecidesUnlessForksAreAsked(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		packages int
		want     bool
	}{
		{[]string{"--quick"}, 0, true},
		{[]string{"--quick", "--budget", "1m"}, 0, true},
		{[]string{"--quick", "--until-decided=false"}, 0, false},
		{[]string{"--quick", "--forks", "5"}, 0, false},
		{[]string{"--quick", "--forks", "5", "--until-decided"}, 0, true},
		{[]string{"--quick", "--precision", "2%"}, 0, false},
		{[]string{"--quick"}, 1, false},
		{[]string{"--until-decided"}, 1, true},
		{nil, 0, false},
		{[]string{"--until-decided"}, 0, true},
	} {
		c := (&app{name: "bench", registry: harness.Default}).runCmd()
		if err := c.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := decides(c, tc.packages); got != tc.want {
			t.Errorf("run %v with %d packages: until decided %v, want %v", tc.args, tc.packages, got, tc.want)
		}
	}
}
