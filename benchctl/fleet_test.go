package benchctl

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/fleet"
	_ "github.com/ledgerbench/ledgerbench/internal/fleetcmd" // sets ab.Fleets
	"github.com/ledgerbench/ledgerbench/internal/session"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// TestABOnAFleet: ab --fleet of the tiny module's regression, measured
// by two agents of one class, each a stratum: the regression is found as
// on one machine, each agent's rounds are a file of their own, and ab.txt
// holds them one after another.
func TestABOnAFleet(t *testing.T) {
	needGit(t)
	url, pool := fleetDatabase(t)
	startFleetAgents(t, pool, "tiny", "agent-1", "agent-2")
	dir, c := tinyRepo(t)
	out := filepath.Join(t.TempDir(), "ab")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	var stdout, stderr strings.Builder
	a := &app{name: "bench", registry: harness.Default, stdout: &stdout, stderr: &stderr, dir: dir, fleet: ab.Fleets}
	code := a.main(t.Context(), []string{"ab", "--explain", "off", "--cmd", "./cmd/bench", "--base", c[1], "--head", c[2], "--bench", "^BenchmarkTinyWork$",
		"--forks", "10", "--warmup", "1x30ms", "--measure", "3x30ms", "--out", out, "--fleet", url, "--class", "tiny", "--job-time", "1ms"})
	if code != 1 || !strings.Contains(stderr.String(), "REGRESSION TinyWork") {
		t.Fatalf("exit %d, want 1 with the regression\n%s\n%s", code, stdout.String(), stderr.String())
	}
	machines, _ := filepath.Glob(filepath.Join(out, "ab-machines", "*.txt"))
	if len(machines) != 2 {
		t.Errorf("files by machine %v, want agent-1's and agent-2's", machines)
	}
	jobs := regexp.MustCompile(`fleet: comparison [0-9a-f]+, (\d+) job\(s\) on class tiny \(0 taken back`).FindStringSubmatch(stderr.String())
	if jobs == nil || jobs[1] == "1" {
		t.Fatalf("no fleet progress, or one job:\n%s", stderr.String())
	}
	// Started again with the same arguments (the programs rebuilt, to the
	// same bytes): every job is taken back, none measured again.
	before := fleetResults(t, pool)
	stderr.Reset()
	code = a.main(t.Context(), []string{"ab", "--explain", "off", "--cmd", "./cmd/bench", "--base", c[1], "--head", c[2], "--bench", "^BenchmarkTinyWork$",
		"--forks", "10", "--warmup", "1x30ms", "--measure", "3x30ms", "--out", out + "-again", "--fleet", url, "--class", "tiny", "--job-time", "1ms"})
	if code != 1 || !strings.Contains(stderr.String(), jobs[1]+" job(s) on class tiny ("+jobs[1]+" taken back") || fleetResults(t, pool) != before {
		t.Errorf("started again: exit %d, %d results before and %d after; want the %s jobs taken back and the regression\n%s", code, before, fleetResults(t, pool), jobs[1], stderr.String())
	}
}

// TestRunOnAFleet: run --fleet of the CLI's suite on two agents, one
// comparison group a job: every case of a one-machine run is measured,
// Enum's two kinds (its implementation axis) on one machine, whose file
// holds both, and the pull-request table compares them with each
// machine a stratum; bench.txt holds the machines' files one after
// another.
func TestRunOnAFleet(t *testing.T) {
	url, pool := fleetDatabase(t)
	startFleetAgents(t, pool, "runs", "agent-1", "agent-2")
	dir := t.TempDir()
	timing := []string{"--suite", "clitest", "--forks", "3", "--warmup", "0", "--measure", "2x10ms"}
	code, _, stderr := abApp(t, dir, append([]string{"run", "--ignore-lock", "--out", filepath.Join(dir, "local")}, timing...)...)
	if code != 0 {
		t.Fatalf("the run on this machine: exit %d\n%s", code, stderr)
	}
	local, _ := os.ReadFile(filepath.Join(dir, "local", "bench.txt"))
	out := filepath.Join(dir, "fleet")
	var stdout, errb strings.Builder
	a := &app{name: "bench", registry: harness.Default, stdout: &stdout, stderr: &errb, dir: dir, fleet: ab.Fleets}
	code = a.main(t.Context(), append([]string{"run", "--out", out, "--fleet", url, "--class", "runs", "--job-time", "1ms"}, timing...))
	if code != 0 || !strings.Contains(stdout.String(), "## /kind against b") || !strings.Contains(stdout.String(), "| Enum/even=2") {
		t.Fatalf("exit %d, want 0 with Enum's table\n%s\n%s", code, stdout.String(), errb.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(slices.Values(resultNames(data))), slices.Sorted(slices.Values(resultNames(local))); !slices.Equal(got, want) {
		t.Errorf("the fleet measured %q, one machine %q", got, want)
	}
	machines, _ := filepath.Glob(filepath.Join(out, "machines", "*.txt"))
	if len(machines) == 0 {
		t.Fatalf("no machine's file in %s", out)
	}
	forks := 0
	for _, m := range machines {
		b, _ := os.ReadFile(m)
		names := resultNames(b)
		if slices.Contains(names, "Enum/kind=a/even=2") != slices.Contains(names, "Enum/kind=b/even=2") {
			t.Errorf("%s holds one of Enum's kinds without the other: %q", m, names)
		}
		forks += countLines(string(b), "BenchmarkEnum/kind=a/even=2")
	}
	if forks != 3*2 {
		t.Errorf("Enum/kind=a has %d result lines on the machines, want 6 (3 rounds × 2 iterations)", forks)
	}
	if !strings.Contains(errb.String(), "fleet: comparison ") {
		t.Errorf("no fleet progress:\n%s", errb.String())
	}
	// bench.json and JMH's table, as on one machine: the same cases,
	// each of 3 forks.
	if got, want := jmhCases(t, filepath.Join(out, "bench.json")), jmhCases(t, filepath.Join(dir, "local", "bench.json")); !slices.Equal(got, want) {
		t.Errorf("the fleet's bench.json: %q\none machine's: %q", got, want)
	}
	if table, err := os.ReadFile(filepath.Join(out, "table.txt")); err != nil || !strings.Contains(string(table), "Enum") {
		t.Errorf("the fleet's table.txt: %v\n%s", err, table)
	}
}

// jmhCases are the cases of a bench.json, each "name params forks".
func jmhCases(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rs []struct {
		Benchmark string            `json:"benchmark"`
		Params    map[string]string `json:"params"`
		Forks     int               `json:"forks"`
	}
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s %v %d", r.Benchmark, r.Params, r.Forks))
	}
	slices.Sort(out)
	return out
}

// TestRunOnAFleetUntilDecided: run --fleet --until-decided measures the
// first 3 rounds of every case, then batches of 3 more of the groups whose
// rows are undecided, deciding the rows by the anytime-valid test over
// every batch, each machine a stratum; a floor (decided at once) keeps
// its first rounds; bench.json holds every batch's forks of a case.
func TestRunOnAFleetUntilDecided(t *testing.T) {
	if raceEnabled {
		t.Skip("batches of race-built forks on two CPUs take minutes: .ci/run runs this test in a normal build")
	}
	url, pool := fleetDatabase(t)
	startFleetAgents(t, pool, "untils", "until-1", "until-2")
	out := filepath.Join(t.TempDir(), "run")
	var stdout, stderr strings.Builder
	a := &app{name: "bench", registry: harness.Default, stdout: &stdout, stderr: &stderr, dir: t.TempDir(), fleet: ab.Fleets}
	code := a.main(t.Context(), []string{"run", "--suite", "clitest", "--bench", "Noop|Enum", "--until-decided", "--budget", "20s",
		"--warmup", "0", "--measure", "2x10ms", "--out", out, "--fleet", url, "--class", "untils", "--job-time", "1ms"})
	if code != 0 || !strings.Contains(stdout.String(), "confidence sequence (anytime-valid") {
		t.Fatalf("exit %d, want 0 with an anytime-valid table\n%s\n%s", code, stdout.String(), stderr.String())
	}
	m := regexp.MustCompile(`--until-decided: (\d) of 3 cases decided in .*, (\d+) rounds at most`).FindStringSubmatch(stderr.String())
	if m == nil || m[1] == "0" {
		t.Fatalf("stderr does not count the decided cases, the floor among them:\n%s", stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n := countLines(string(data), "BenchmarkNoop") / 2; n != 3 {
		t.Errorf("the floor ran %d forks, want the first 3", n)
	}
	enum := countLines(string(data), "BenchmarkEnum/kind=a/even=2") / 2
	batches := strings.Count(stderr.String(), "more rounds of them")
	if enum != 3*(batches+1) || m[2] != fmt.Sprint(enum) || countLines(string(data), "BenchmarkEnum/kind=b/even=2")/2 != enum {
		t.Errorf("Enum/kind=a ran %d forks (kind=b %d) in %d batches after the first, the report says %s rounds: want 3 a batch, both kinds alike\n%s",
			enum, countLines(string(data), "BenchmarkEnum/kind=b/even=2")/2, batches, m[2], stderr.String())
	}
	got := jmhCases(t, filepath.Join(out, "bench.json"))
	if want := fmt.Sprintf(".Enum map[even:2 kind:a] %d", enum); !slices.ContainsFunc(got, func(c string) bool { return strings.HasSuffix(c, want) }) {
		t.Errorf("bench.json: %q, want %q among them", got, want)
	}
}

// fleetResults counts the jobs' results in the fleet's database.
func fleetResults(t *testing.T, pool *pgxpool.Pool) int {
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM benchctl_fleet_result`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// fleetDatabase is a migrated fleet database of the test's own: its URL
// and a pool, closed at the test's end.
func fleetDatabase(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	url := testenv.PostgresDB(t)
	pool, err := fleet.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := fleet.Migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	return url, pool
}

// startFleetAgents starts an agent of class for each name.
func startFleetAgents(t *testing.T, pool *pgxpool.Pool, class string, names ...string) {
	t.Helper()
	for _, name := range names {
		startFleetAgent(t, pool, class, name)
	}
}

// startFleetAgent starts an agent of class measuring on this machine,
// stopped at the test's end.
func startFleetAgent(t *testing.T, pool *pgxpool.Pool, class, name string) {
	t.Helper()
	eo := engine.DefaultOptions()
	env := &session.Env{Name: name, Stderr: os.Stderr}
	s, err := session.Prepare(t.Context(), env, session.HostOptions{IgnoreLock: true}, &eo)
	if err != nil {
		t.Fatal(err)
	}
	m := &fleet.Machine{Pool: pool, Session: s, Dir: t.TempDir(), Name: name}
	ag := &fleet.Agent{Pool: pool, Class: class, Name: name, Measure: m.Measure}
	if err := ag.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ag.Drain(10 * time.Second)
		s.Release()
	})
}

// TestFleetFlagsRefused: --fleet in a program without a fleet client,
// --class without --fleet, and --fleet with what a fleet does not run
// exit 2 before building anything.
func TestFleetFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ab", "--base", "HEAD", "--fleet", "postgres://x@127.0.0.1:1/db"}, "--fleet: bench links no fleet client"},
		{[]string{"ab", "--base", "HEAD", "--class", "a"}, "--class and --job-time go with --fleet"},
		{[]string{"bisect", "--good", "HEAD~1", "--bad", "HEAD", "--job-time", "1m"}, "--class and --job-time go with --fleet"},
		{[]string{"ab", "--base", "HEAD", "--fleet", "postgres://x@127.0.0.1:1/db", "--job-time", "0s"}, "--job-time 0s: want a positive duration"},
		{[]string{"run", "--suite", "clitest", "--class", "a"}, "--class and --job-time go with --fleet"},
		{[]string{"run", "--suite", "clitest", "--fleet", "postgres://x@127.0.0.1:1/db", "--prof", "cpu"}, "--prof runs on one machine"},
		{[]string{"run", "--suite", "clitest", "--fleet", "postgres://x@127.0.0.1:1/db", "--budget", "1m"}, "--budget without --until-decided runs on one machine"},
		{[]string{"run", "--suite", "clitest", "--fleet", "postgres://x@127.0.0.1:1/db", "--until-decided", "--forks", "2"}, "--forks 2: --until-decided looks at the rows from round 3 on"},
		{[]string{"run", "--suite", "clitest", "--fleet", "postgres://x@127.0.0.1:1/db", "--shard", "1/2"}, "--shard (a fleet shares"},
		{[]string{"run", "./...", "--fleet", "postgres://x@127.0.0.1:1/db"}, "a package's go test benchmarks run on a fleet with ab or bisect"},
		{[]string{"run", "--suite", "clitest", "--fleet", "postgres://x@127.0.0.1:1/db"}, "--fleet: bench links no fleet client"},
		{[]string{"nightly", "--suite", "clitest", "--every", "1h"}, "--every and --at go with --fleet"},
		{[]string{"nightly", "--suite", "clitest", "--fleet", "postgres://x@127.0.0.1:1/db", "--anchor", "v1"}, "a plain run: --anchor runs on one machine"},
		{[]string{"nightly", "--suite", "clitest", "--fleet", "postgres://x@127.0.0.1:1/db", "--bisect"}, "does not --bisect"},
		{[]string{"nightly", "--suite", "clitest", "--fleet", "postgres://x@127.0.0.1:1/db", "--forks", "0"}, "--forks 0 runs on one machine"},
		{[]string{"nightly", "--suite", "clitest", "--fleet", "postgres://x@127.0.0.1:1/db"}, "--fleet: bench links no fleet client"},
	} {
		code, _, stderr := abApp(t, t.TempDir(), tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, want 2 saying %q\n%s", tc.args, code, tc.want, stderr)
		}
	}
}

// TestParallelBisectOnAFleet: a history of 16 commits, the 11th 8×
// slower, bisected on a fleet of three agents probing 3 commits at once:
// the culprit in at most ⌈log₄ 16⌉ = 2 search steps (4 one at a time),
// each step's commits probed in one batch, the report saying so.
func TestParallelBisectOnAFleet(t *testing.T) {
	if raceEnabled {
		// 150 to 280 s under the race detector, 53 s without: the
		// parallel search's goroutines are race-tested in internal/bisect.
		t.Skip("three agents' race-built forks on two CPUs take minutes: .ci/run runs this test in a normal build")
	}
	needGit(t)
	url, pool := fleetDatabase(t)
	startFleetAgents(t, pool, "hist", "agent-1", "agent-2", "agent-3")
	dir, c := historyRepo(t, 16, 11, 8)
	out := filepath.Join(t.TempDir(), "bisect")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	var stdout, stderr strings.Builder
	a := &app{name: "bench", registry: harness.Default, stdout: &stdout, stderr: &stderr, dir: dir, fleet: ab.Fleets}
	args := append([]string{"bisect", "--good", c[0], "--bad", c[16], "--build-cache", filepath.Join(t.TempDir(), "cache"), "--out", out, "--fleet", url, "--class", "hist", "--parallel", "3"}, bisectTiming...)
	args = append(args, "--budget", "45s") // the last value wins: three agents share 2 CPUs under -race
	if code := a.main(t.Context(), args); code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout.String(), stderr.String())
	}
	r := readBisect(t, out)
	if r.Culprit == nil || r.Culprit.Hash != c[11] {
		t.Fatalf("culprit %+v, want %s\n%s", r.Culprit, c[11], stderr.String())
	}
	for _, m := range regexp.MustCompile(`\((\d+) taken back from an earlier start\)`).FindAllStringSubmatch(stderr.String(), -1) {
		if m[1] != "0" {
			t.Errorf("an A/B of the bisection took back %s jobs of another (the ends measured again must be measured afresh):\n%s", m[1], stderr.String())
			break
		}
	}
	batches := map[int]int{}
	for _, s := range r.Steps {
		batches[s.Batch]++
	}
	if r.Parallel != 3 || r.Batches != len(batches) || r.Batches > 2 {
		t.Errorf("parallel %d, %d batches (%v); want 3 at once in at most 2", r.Parallel, r.Batches, batches)
	}
	if !strings.Contains(stdout.String(), "up to 3 commits probed at once: the search took") {
		t.Errorf("the report does not say how the search went:\n%s", stdout.String())
	}
}

// TestFleetDatabaseRefused: a fleet database that cannot be reached, or
// one never migrated, exits 2 with a clear error before anything is
// built.
func TestFleetDatabaseRefused(t *testing.T) {
	fresh := testenv.PostgresDB(t) // a database of its own, never migrated
	for _, tc := range []struct{ url, want string }{
		{"postgres://bench@127.0.0.1:1/none", "fleet database: "},
		{fresh, "fleet database: no table river_job: it was not migrated"},
	} {
		t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
		var stdout, stderr strings.Builder
		a := &app{name: "bench", registry: harness.Default, stdout: &stdout, stderr: &stderr, dir: t.TempDir(), fleet: ab.Fleets}
		code := a.main(t.Context(), []string{"ab", "--base", "HEAD", "--fleet", tc.url, "--class", "c"})
		if code != 2 || !strings.Contains(stderr.String(), tc.want) || strings.Contains(stderr.String(), "building") {
			t.Errorf("--fleet %s: exit %d, want 2 saying %q before building\n%s", tc.url, code, tc.want, stderr.String())
		}
	}
}

// TestABOnAFleetUntilDecided: with --budget (until decided), ab on a
// fleet measures in batches and gives more rounds only to the rows still
// undecided: the tiny module's 4× regression is decided by the first
// batch; the module against itself is not decided within ±1 %, so it is
// given batch after batch, within the budget.
func TestABOnAFleetUntilDecided(t *testing.T) {
	needGit(t)
	url, pool := fleetDatabase(t)
	startFleetAgents(t, pool, "seq", "agent-1", "agent-2")
	dir, c := tinyRepo(t)
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	run := func(head, out, budget string) (int, time.Duration, string) {
		var stdout, stderr strings.Builder
		a := &app{name: "bench", registry: harness.Default, stdout: &stdout, stderr: &stderr, dir: dir, fleet: ab.Fleets}
		start := time.Now()
		code := a.main(t.Context(), []string{"ab", "--explain", "off", "--cmd", "./cmd/bench", "--base", c[1], "--head", head, "--bench", "^BenchmarkTinyWork$",
			"--warmup", "1x30ms", "--measure", "3x30ms", "--budget", budget, "--out", out, "--fleet", url, "--class", "seq"})
		return code, time.Since(start), stderr.String() + stdout.String()
	}
	// The regression (6×) is decided by its first batch on an idle
	// machine; under a loaded CI runner's noise 3 pairs may not be
	// enough, so its budget allows more batches. It must stop at the
	// batch that decides it: a comparison that went on would add a
	// batch after it (up to 10,000 rounds) and name the row again.
	out := filepath.Join(t.TempDir(), "reg")
	code, _, log := run(c[2], out, "3m")
	batches, _ := filepath.Glob(filepath.Join(out, "ab-batch-*"))
	if code != 1 || !strings.Contains(log, "REGRESSION TinyWork") || strings.Contains(log, "undecided BenchmarkTinyWork") ||
		strings.Count(log, "row(s) undecided after") != len(batches)-1 || len(batches) > 4 {
		t.Errorf("the regression: exit %d, %d batches; want 1, decided by a batch, after which none was added:\n%s", code, len(batches), log)
	}
	out = filepath.Join(t.TempDir(), "aa")
	code, took, log := run(c[1], out, "40s")
	batches, _ = filepath.Glob(filepath.Join(out, "ab-batch-*"))
	if code != 0 || !strings.Contains(log, "fleet: 1 row(s) undecided after 3 rounds; 3 more rounds of them") || len(batches) < 2 {
		t.Errorf("the A/A: exit %d, %d batches; want 0, and rounds added to the undecided row:\n%s", code, len(batches), log)
	}
	if took > 40*time.Second+10*time.Second { // the builds, and a batch's jobs' polling
		t.Errorf("the A/A took %s with --budget 40s", took)
	}
	data, _ := os.ReadFile(filepath.Join(out, "ab.txt"))
	if n := countLines(string(data), "BenchmarkTinyWork"); n != 2*3*3*len(batches) {
		t.Errorf("ab.txt holds %d result lines of TinyWork, want %d (2 sides × 3 rounds × 3 iterations × %d batches)", n, 2*3*3*len(batches), len(batches))
	}
}

// countLines counts the lines of data that begin with prefix.
func countLines(data, prefix string) int {
	n := 0
	for line := range strings.Lines(data) {
		if strings.HasPrefix(line, prefix) {
			n++
		}
	}
	return n
}
