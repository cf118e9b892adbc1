package benchctl

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck/hostchecktest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func checkWith(t *testing.T, fixture string, args ...string) (int, string) {
	t.Helper()
	m := hostchecktest.Fixtures()[fixture]
	var out, errb bytes.Buffer
	a := &app{registry: harness.Default, stdout: &out, stderr: &errb,
		host: func() *hostcheck.Host { return hostchecktest.FixtureHost(t, m) }}
	code := a.main(context.Background(), args)
	return code, out.String() + errb.String()
}

func TestCheckGolden(t *testing.T) {
	for name := range hostchecktest.Fixtures() {
		for _, format := range []string{"txt", "json"} {
			args := []string{"check"}
			if format == "json" {
				args = append(args, "--json")
			}
			code, got := checkWith(t, name, args...)
			if code != 0 {
				t.Errorf("%s: check exited %d", name, code)
			}
			path := filepath.Join("testdata", "check-"+name+"."+format)
			if *update {
				os.WriteFile(path, []byte(got), 0o644)
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from its golden file (go test -update rewrites it):\n%s", path, got)
			}
		}
	}
}

func TestCheckStrict(t *testing.T) {
	if code, out := checkWith(t, "vm-no-cpufreq", "check", "--strict"); code != 1 || !strings.Contains(out, "host not pinned: cpufreq is not exposed") {
		t.Errorf("strict on a VM: exit %d\n%s", code, out)
	}
	if code, _ := checkWith(t, "intel-server-pinned", "check", "--strict"); code != 0 {
		t.Errorf("strict on a pinned host: exit %d", code)
	}
	if code, out := checkWith(t, "vm-no-cpufreq", "run", "--suite", "clitest", "--strict", "--out", t.TempDir()); code != 1 || !strings.Contains(out, "refusing to run on a host that is not pinned") {
		t.Errorf("run --strict on a VM: exit %d\n%s", code, out)
	}
}

// TestRunLockWaitsAndGuardsTheHost: a run can wait for the run lock
// (--wait-lock) instead of failing, and tune and reset, which change the
// host, take it too.
func TestRunLockWaitsAndGuardsTheHost(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "benchctl.lock")
	release, err := hostcheck.Lock(lock)
	if err != nil {
		t.Fatal(err)
	}
	run := []string{"run", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--forks", "1", "--warmup", "0", "--measure", "1x10ms", "--lock", lock}
	if code, stderr := checkWith(t, "laptop-battery-powersave", append(run, "--out", filepath.Join(t.TempDir(), "o"))...); code != 1 || !strings.Contains(stderr, "another run holds the lock") {
		t.Errorf("a held lock without --wait-lock: exit %d\n%s", code, stderr)
	}
	state := filepath.Join(t.TempDir(), "state.json")
	for _, cmd := range [][]string{{"tune", "--state", state, "--lock", lock}, {"reset", "--state", state, "--lock", lock}} {
		if code, out := checkWith(t, "laptop-battery-powersave", cmd...); code != 1 || !strings.Contains(out, "another run holds the lock") {
			t.Errorf("%s with the lock held: exit %d\n%s", cmd[0], code, out)
		}
	}
	time.AfterFunc(500*time.Millisecond, func() { release() })
	code, stderr := checkWith(t, "laptop-battery-powersave", append(run, "--wait-lock", "20s", "--out", filepath.Join(t.TempDir(), "o"))...)
	if code != 0 || !strings.Contains(stderr, "waiting up to 20s for the run lock") {
		t.Errorf("--wait-lock 20s with the lock released after 0.5 s: exit %d\n%s", code, stderr)
	}
}
