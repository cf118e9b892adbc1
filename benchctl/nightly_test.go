package benchctl

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
)

// seedHistory writes synthetic nightly runs of BenchmarkNoop on this
// machine: values in order, one file each, a minute apart.
func seedHistory(t *testing.T, dir string, values []float64) {
	t.Helper()
	id := hostcheck.Check(hostcheck.Local("0.1.0", hostcheck.Probe)).MachineID
	start := time.Now().Add(-time.Duration(len(values)+1) * time.Hour)
	for i, v := range values {
		p := history.NightlyPath(dir, id, start.Add(time.Duration(i)*time.Minute), fmt.Sprintf("%040d", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		var b strings.Builder
		fmt.Fprintf(&b, "env-id: synthetic\ncommit: %040d\n", i)
		for j := 0; j < 3; j++ {
			fmt.Fprintf(&b, "%s 1000000 %g ns/op\n", noopName(), v*(1+0.01*float64(j-1)))
		}
		os.WriteFile(p, []byte(b.String()), 0o644)
	}
}

func nightly(t *testing.T, dir string) (int, string, string) {
	return benchctl(t, "nightly", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--anchor", "none", "--allow-unpinned",
		"--forks", "1", "--warmup", "0", "--measure", "3x20ms", "--results", dir)
}

func TestNightlyRecordsAndReports(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := nightly(t, dir)
	if code != 0 || !strings.Contains(stdout, "recorded "+filepath.Join(dir, "nightly")) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	machines, _ := filepath.Glob(filepath.Join(dir, "machines", "*.json"))
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if len(machines) != 1 || err != nil || !strings.Contains(string(readme), "| "+noopName()+" | sec/op |") {
		t.Fatalf("machines %v, README %v:\n%s", machines, err, readme)
	}
	if code, _, stderr := benchctl(t, "nightly", "--suite", "clitest", "--results", dir, "--anchor", "none"); code != 1 || !strings.Contains(stderr, "not pinned") {
		t.Errorf("nightly without --allow-unpinned on this VM: exit %d, %s", code, stderr)
	}
}

func TestNightlyAlarmsOnANewRegression(t *testing.T) {
	// 16 fast runs, then 3 runs as slow as the real Noop: the new run is
	// the fourth slow point, which makes the step detectable.
	dir := t.TempDir()
	var values []float64
	for i := 0; i < 16; i++ {
		values = append(values, 0.2)
	}
	code, _, _ := benchctl(t, "run", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--forks", "1", "--warmup", "0", "--measure", "1x20ms", "--out", filepath.Join(t.TempDir(), "probe"))
	if code != 0 {
		t.Fatal("probe run failed")
	}
	for i := 0; i < 3; i++ {
		values = append(values, 2) // about the real Noop on these VMs
	}
	seedHistory(t, dir, values)
	code, _, stderr := nightly(t, dir)
	if code != 1 || !strings.Contains(stderr, "NEW REGRESSION "+noopName()+" sec/op") {
		t.Fatalf("exit %d, want 1 with a new regression\n%s", code, stderr)
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(readme), "**Open regressions**") || !strings.Contains(string(readme), "NEW**") ||
		!strings.Contains(string(readme), "!["+noopName()+" sec/op](charts/") {
		t.Errorf("README does not show the regression:\n%s", readme)
	}
	// The loop to the commit: the exact bisect command, in both.
	cmd := regexp.MustCompile("bisect it: `\\S+ bisect --good [0-9a-f]{1,12} --bad [0-9a-f]{1,12} --bench '\\^BenchmarkNoop\\$'`")
	if !cmd.MatchString(stderr) || !cmd.MatchString(string(readme)) {
		t.Errorf("no bisect command beside the regression:\n%s\n%s", stderr, readme)
	}
}

// noopName is BenchmarkNoop's name in results: with the forks'
// GOMAXPROCS suffix, as go test writes it.
func noopName() string {
	if n := runtime.GOMAXPROCS(0); n > 1 {
		return fmt.Sprintf("BenchmarkNoop-%d", n)
	}
	return "BenchmarkNoop"
}

// TestNightlyLeavesNoLogsBehind: the fork logs of a nightly run in which
// every fork succeeded are removed (they stay out of the append-only
// results, and a temporary directory per night would pile up); a failed
// fork's logs are kept and named.
func TestNightlyLeavesNoLogsBehind(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	code, _, stderr := nightly(t, t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "benchctl-nightly-logs-*")); len(left) > 0 {
		t.Errorf("a successful nightly left %v", left)
	}
	code, _, stderr = benchctl(t, "nightly", "--bench", "^BenchmarkCliPanic$", "--anchor", "none", "--allow-unpinned",
		"--forks", "1", "--warmup", "0", "--measure", "1x20ms", "--results", t.TempDir())
	left, _ := filepath.Glob(filepath.Join(tmp, "benchctl-nightly-logs-*"))
	if code != 1 || len(left) != 1 || !strings.Contains(stderr, "fork logs in "+left[0]) {
		t.Errorf("a failed fork: exit %d, logs %v\n%s", code, left, stderr)
	}
}

// TestNightlyThatCannotRecordSavesItsResults: when the run cannot be
// recorded where it belongs (here a file stands where the machine's
// directory goes), what was measured is saved elsewhere and named, not
// lost.
func TestNightlyThatCannotRecordSavesItsResults(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	os.MkdirAll(filepath.Join(dir, "nightly"), 0o755)
	id := hostcheck.Check(hostcheck.Local("0.1.0", hostcheck.Probe)).MachineID
	os.WriteFile(filepath.Join(dir, "nightly", id), []byte("in the way"), 0o644)
	code, _, stderr := nightly(t, dir)
	m := regexp.MustCompile(`saved in (\S+) instead`).FindStringSubmatch(stderr)
	if code != 1 || m == nil {
		t.Fatalf("exit %d, want 1 naming where the results went\n%s", code, stderr)
	}
	if b, err := os.ReadFile(m[1]); err != nil || !strings.Contains(string(b), noopName()) {
		t.Errorf("the saved results: %v\n%s", err, b)
	}
}
