package benchctl

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// TestRunShards: run --shard 1/2 and 2/2 of the clitest suite measure
// disjoint shares that together are the unsharded run's cases, the two
// points of Enum's implementation axis in one share; each file says it is
// a share; compare of the two files gives the axis table and every row.
func TestRunShards(t *testing.T) {
	dir := t.TempDir()
	run := func(out string, extra ...string) []string {
		args := append([]string{"run", "--suite", "clitest", "--forks", "1", "--warmup", "0", "--measure", "2x10ms", "--ignore-lock", "--out", out}, extra...)
		if code, stdout, stderr := abApp(t, dir, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "bench.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return resultNames(data)
	}
	whole := run(filepath.Join(dir, "whole"))
	s1, s2 := filepath.Join(dir, "s1"), filepath.Join(dir, "s2")
	one, two := run(s1, "--shard", "1/2"), run(s2, "--shard", "2/2")
	if len(one) == 0 || len(two) == 0 {
		t.Fatalf("a share is empty: %q, %q", one, two)
	}
	for _, n := range one {
		if slices.Contains(two, n) {
			t.Errorf("%s in both shares", n)
		}
	}
	if got := slices.Sorted(slices.Values(append(slices.Clone(one), two...))); !slices.Equal(got, slices.Sorted(slices.Values(whole))) {
		t.Errorf("the shares hold %q, the whole run %q", got, whole)
	}
	for _, share := range [][]string{one, two} {
		if slices.Contains(share, "Enum/kind=b/even=2") != slices.Contains(share, "Enum/kind=a/even=2") {
			t.Errorf("Enum's implementations split over shares: %q", share)
		}
	}
	data, _ := os.ReadFile(filepath.Join(s2, "bench.txt"))
	if !strings.Contains(string(data), "# benchctl: shard=2/2: these are share 2/2 of the selected cases") {
		t.Errorf("share 2's file does not say it is one:\n%.600s", data)
	}
	code, stdout, stderr := abApp(t, dir, "compare", "--col", "/kind", "--format", "csv", filepath.Join(s1, "bench.txt"), filepath.Join(s2, "bench.txt"))
	if code != 0 || !strings.Contains(stdout, "Enum/even=2") {
		t.Errorf("compare --col /kind of the shares: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = abApp(t, dir, "compare", filepath.Join(s1, "bench.txt"), filepath.Join(s2, "bench.txt"))
	for _, n := range whole {
		if !strings.Contains(stdout, n) {
			t.Errorf("compare of the shares lacks %s (exit %d)\n%s", n, code, stdout)
		}
	}
}

// resultNames are the distinct benchmark names of a file's result lines,
// without "Benchmark" and the GOMAXPROCS suffix.
func resultNames(data []byte) []string {
	var out []string
	for line := range strings.SplitSeq(string(data), "\n") {
		name, _, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(name, "Benchmark") {
			continue
		}
		name = result.TrimProcs(strings.TrimPrefix(name, "Benchmark"))
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// TestABShards: ab --shard 1/2 and 2/2 of a package's two benchmarks
// each measure one of them on both sides, and compare of the two files
// by toolchain gives both rows, the 4× slower Work changed.
func TestABShards(t *testing.T) {
	dir, c := goRepo(t)
	var files []string
	var held []string
	for _, sh := range []string{"1/2", "2/2"} {
		out := filepath.Join(t.TempDir(), "ab")
		code, stdout, stderr := abApp(t, dir, "ab", "--base", c[0], "--head", c[1], "./work", "--shard", sh, "--explain", "off",
			"--forks", "3", "--warmup", "1x20ms", "--measure", "2x30ms", "--out", out)
		if code != 0 && code != 1 || !strings.Contains(stderr, "shard "+sh+": 1 of the 2 cases both revisions run") {
			t.Fatalf("--shard %s: exit %d\n%s\n%s", sh, code, stdout, stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "ab.txt"))
		if err != nil {
			t.Fatal(err)
		}
		names := resultNames(data)
		if len(names) != 1 || strings.Count(string(data), "toolchain: ") != 2 {
			t.Errorf("--shard %s: ab.txt holds %q (want one benchmark on two sides)", sh, names)
		}
		files, held = append(files, filepath.Join(out, "ab.txt")), append(held, names...)
	}
	if slices.Sort(held); !slices.Equal(held, []string{"New", "Work"}) {
		t.Errorf("the shares hold %q, want New and Work once each", held)
	}
	code, stdout, stderr := abApp(t, dir, append([]string{"compare", "--col", "toolchain", "--format", "csv"}, files...)...)
	if code != 0 || !strings.Contains(stdout, ",sec/op,New") ||
		!regexp.MustCompile(`,sec/op,Work(-\d+)?,experiment,[^\n]*,changed,`).MatchString(stdout) {
		t.Errorf("compare of the shares: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
