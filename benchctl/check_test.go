package benchctl

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
