package benchctl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/internal/ab"
)

// testdataRepo makes a git repository of a module whose benchmark reads
// how much work to do from its package's testdata: the second commit
// changes only that file, 64 rounds to 256, so a machine that ran the
// benchmark outside its package's directory (or with the other side's)
// would not see the change.
func testdataRepo(t *testing.T) (dir string, commits [2]string) {
	t.Helper()
	needGit(t)
	gobench(t)
	dir = t.TempDir()
	write, gitT := repoTools(t, dir)
	gitT("init", "-q")
	write("go.mod", "module example.com/fleetgo\n\ngo 1.24\n")
	write("work/work_test.go", `package work

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

var sink uint64

func BenchmarkWork(b *testing.B) {
	data, err := os.ReadFile("testdata/rounds.txt")
	if err != nil {
		b.Fatal(err)
	}
	rounds, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for i := 0; i < rounds; i++ {
			sink = sink*6364136223846793005 + 1442695040888963407
		}
	}
}
`)
	write("work/testdata/rounds.txt", "64\n")
	gitT("add", ".")
	gitT("commit", "-q", "-m", "work")
	commits[0] = gitT("rev-parse", "HEAD")
	write("work/testdata/rounds.txt", "256\n")
	gitT("commit", "-q", "-am", "four times the rounds")
	commits[1] = gitT("rev-parse", "HEAD")
	return dir, commits
}

// TestABOfGoTestBenchmarksOnAFleet: ab --fleet of a package's go test
// benchmark, by two agents with neither a checkout nor a toolchain: each
// side's test binary is shipped with its package's directory, so the
// change, made in testdata alone, is found; the machines' files name
// the package.
func TestABOfGoTestBenchmarksOnAFleet(t *testing.T) {
	dir, c := testdataRepo(t)
	url, pool := fleetDatabase(t)
	startFleetAgents(t, pool, "gotests", "gotest-1", "gotest-2")
	out := filepath.Join(t.TempDir(), "ab")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	var stdout, stderr strings.Builder
	a := &app{name: "bench", registry: harness.Default, stdout: &stdout, stderr: &stderr, dir: dir, fleet: ab.Fleets}
	code := a.main(t.Context(), []string{"ab", "--explain", "off", "--base", c[0], "--head", c[1], "./work", "--forks", "6", "--warmup", "1x20ms", "--measure", "2x30ms",
		"--out", out, "--fleet", url, "--class", "gotests"})
	if code != 1 || !strings.Contains(stderr.String(), "significant regression") || !strings.Contains(stderr.String(), "fleet: comparison ") {
		t.Fatalf("exit %d, want 1 for the 4× slower Work, measured on the fleet\n%s\n%s", code, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "ab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "pkg: example.com/fleetgo/work") || countLines(string(data), "BenchmarkWork") < 2*6*2 {
		t.Errorf("ab.txt lacks the package, or 6 forks × 2 iterations of both sides:\n%s", data)
	}
}

// TestBisectOfGoTestBenchmarksOnAFleet: bisect --fleet of a package's go
// test benchmark names the commit that changed its test data alone.
func TestBisectOfGoTestBenchmarksOnAFleet(t *testing.T) {
	if raceEnabled {
		t.Skip("a bisection's race-built test binaries on two CPUs take minutes: .ci/run runs this test in a normal build")
	}
	dir, c := testdataRepo(t)
	url, pool := fleetDatabase(t)
	startFleetAgents(t, pool, "gotests", "gotest-1", "gotest-2")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	var stdout, stderr strings.Builder
	a := &app{name: "bench", registry: harness.Default, stdout: &stdout, stderr: &stderr, dir: dir, fleet: ab.Fleets}
	code := a.main(t.Context(), []string{"bisect", "--explain", "off", "--good", c[0], "--bad", c[1], "./work", "--bench", "^BenchmarkWork$", "--forks", "6",
		"--warmup", "1x20ms", "--measure", "2x30ms", "--out", filepath.Join(t.TempDir(), "bisect"), "--fleet", url, "--class", "gotests"})
	t.Logf("%s\n%s", stdout.String(), stderr.String())
	if code != 0 || !strings.Contains(stdout.String()+stderr.String(), c[1][:12]) || !strings.Contains(stdout.String(), "culprit") {
		t.Errorf("bisect --fleet: exit %d, want 0 naming %.12s the culprit\n%s\n%s", code, c[1], stdout.String(), stderr.String())
	}
}
