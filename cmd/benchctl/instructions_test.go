//go:build !race

package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// TestInstructionsRepeat builds benchctl (callgrind needs a binary with a
// symbol table, which go test's and go run's are not) and checks that the
// fixed-cost kernel's instructions/op is the same in two runs, within
// 0.1 %. The race detector's runtime does not run under valgrind, so this
// test is in non-race builds only; .ci/run runs it.
func TestInstructionsRepeat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds benchctl and runs it under valgrind")
	}
	testenv.MustHave(t, "valgrind")
	dir := t.TempDir()
	bin := filepath.Join(dir, "benchctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var got []float64
	for i := 0; i < 2; i++ {
		out := filepath.Join(dir, "run"+strconv.Itoa(i))
		cmd := exec.Command(bin, "run", "--suite", "self", "--bench", "^BenchmarkKernel$", "--forks", "1",
			"--warmup", "0", "--measure", "1x20ms", "--prof", "instructions", "--out", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("benchctl: %v\n%s", err, b)
		}
		txt, err := os.ReadFile(filepath.Join(out, "bench.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(txt), "Unit instructions/op assume=exact") {
			t.Errorf("bench.txt lacks the exact-unit line:\n%s", txt)
		}
		for _, line := range strings.Split(string(txt), "\n") {
			f := strings.Fields(line)
			if len(f) == 4 && strings.HasPrefix(f[0], "BenchmarkKernel") && f[3] == "instructions/op" {
				v, _ := strconv.ParseFloat(f[2], 64)
				got = append(got, v)
			}
		}
	}
	if len(got) != 2 {
		t.Fatalf("found %d instructions/op values, want 2", len(got))
	}
	t.Logf("instructions/op: %v", got)
	if math.Abs(got[0]-got[1]) > 0.001*got[0] || got[0] < 64*3 {
		t.Errorf("instructions/op %v: want two equal values (±0.1 %%) of at least 3 per kernel round", got)
	}
}
