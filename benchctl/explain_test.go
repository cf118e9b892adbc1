package benchctl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/internal/explain"
)

// TestABExplainsTheChangedRow: an A/B of a commit that runs Work's loop
// four times as long names tiny.Work first under the table, with its
// share of the change, and leaves the row's profiles, difference, text
// and flame graph; bad values exit 2 (--explain off: see the bisect test).
// The two programs it built are kept in --build-cache: a second A/B of
// the same commits builds neither, and with --build-cache off both again.
func TestABExplainsTheChangedRow(t *testing.T) {
	needGit(t)
	dir, c := historyRepo(t, 1, 1, 4)
	cache := filepath.Join(t.TempDir(), "builds")
	// 5 pairs: with 3, one pair disturbed by the parallel -race run left
	// the 4× slowdown unknown ([-24.9, +971.5] %, p = 0.078).
	args := []string{"ab", "--base", c[0], "--head", c[1], "--cmd", "./cmd/bench", "--bench", "^BenchmarkWorkLoop$", "--forks", "5",
		"--warmup", "1x20ms", "--measure", "3x200ms", "--min-change", "10", "--explain-rounds", "3", "--build-cache", cache}
	out := filepath.Join(t.TempDir(), "ab")
	code, stdout, stderr := abApp(t, dir, append(args, "--out", out)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a regression)\n%s\n%s", code, stdout, stderr)
	}
	if built := strings.Count(stderr, "\nbench: building "); built != 2 {
		t.Errorf("the first A/B built %d programs, want 2:\n%s", built, stderr)
	}
	keptBuilds(t, dir, c, cache)
	_, section, ok := strings.Cut(stdout, "**Functions behind the rows**")
	if !ok {
		t.Fatalf("no functions under the table:\n%s", stdout)
	}
	line := ""
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "- ") {
			line = l
			break
		}
	}
	name, named, _ := strings.Cut(line, ": ")
	if !strings.Contains(name, "WorkLoop") || !strings.HasPrefix(named, "tiny.Work +") || !strings.Contains(named, "% of the change)") {
		t.Errorf("the row's line is %q, want WorkLoop's with tiny.Work named first and its share", line)
	}
	if _, err := os.Stat(filepath.Join(out, "explain", "logs")); err == nil {
		t.Error("the profiling forks' logs are kept though none failed")
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "explain", "*WorkLoop*"))
	if len(dirs) != 1 {
		t.Fatalf("explain directories %v, want one for WorkLoop", dirs)
	}
	for _, f := range []string{explain.BaseFile, explain.ExperimentFile, explain.DiffFile, explain.TextFile, explain.FlameFile} {
		if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
			t.Error(err)
		}
	}
	for _, bad := range [][]string{{"--explain", "yes"}, {"--explain-rounds", "2"}} {
		if code, _, stderr := abApp(t, dir, append(args, bad...)...); code != 2 || !strings.Contains(stderr, bad[0]) {
			t.Errorf("%v: exit %d, want 2 naming the flag\n%s", bad, code, stderr)
		}
	}
}

// keptBuilds: an A/B of the commits just compared with --build-cache
// takes both programs from it, and with --build-cache off builds both.
func keptBuilds(t *testing.T, dir string, c []string, cache string) {
	t.Helper()
	again := []string{"ab", "--base", c[0], "--head", c[1], "--cmd", "./cmd/bench", "--bench", "^BenchmarkWorkLoop$", "--forks", "1",
		"--warmup", "1x5ms", "--measure", "1x5ms", "--explain", "off"}
	for _, tc := range []struct {
		cache         string
		built, before int
	}{{cache, 0, 2}, {"off", 2, 0}} {
		code, _, stderr := abApp(t, dir, append(again, "--build-cache", tc.cache, "--out", filepath.Join(t.TempDir(), "ab"))...)
		built, before := strings.Count(stderr, "\nbench: building "), strings.Count(stderr, ": built before (")
		if code == 2 || built != tc.built || before != tc.before {
			t.Errorf("--build-cache %s: exit %d, %d built and %d taken from the cache, want %d and %d:\n%s", tc.cache, code, built, before, tc.built, tc.before, stderr)
		}
	}
}
