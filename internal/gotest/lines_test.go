package gotest

import (
	"strings"
	"testing"
)

// TestKeptLinesAreBounded: what a test binary prints beyond the lines the
// listing reads (benchmark names, skips and their logs) is not kept, so a
// TestMain that prints hundreds of megabytes costs no memory; lines kept
// are clipped and their total bounded.
func TestKeptLinesAreBounded(t *testing.T) {
	var k keptLines
	junk := strings.Repeat("x", 1<<20) + "\n"
	for range 200 { // 200 MiB of output no listing reads
		k.Write([]byte(junk))
	}
	k.Write([]byte("BenchmarkA\n--- SKIP: BenchmarkB\n    why it skipped\nok\n"))
	k.Write([]byte("BenchmarkLong" + strings.Repeat("y", 1<<20) + "\n"))
	k.Write([]byte("Benchmark"))
	k.Write([]byte("C\n"))
	got := k.String()
	if !strings.Contains(got, "BenchmarkA\n--- SKIP: BenchmarkB\n    why it skipped\n") || !strings.Contains(got, "\nBenchmarkC\n") {
		t.Errorf("the lines the listing reads are lost:\n%.300q", got)
	}
	if len(got) > 2*maxKeptLine {
		t.Errorf("kept %d bytes of 201 MiB: the junk and the long line were kept", len(got))
	}
	for range 10_000 {
		k.Write([]byte("Benchmark" + strings.Repeat("z", 4000) + "\n"))
	}
	if len(k.String()) > maxKept+maxKeptLine || !k.truncated {
		t.Errorf("kept %d bytes (truncated %v): the total is not bounded at %d", len(k.String()), k.truncated, maxKept)
	}
}
