package hostile

import (
	"fmt"
	"os"
	"runtime"
	"testing"
)

// BenchmarkExitZero prints as many result lines of its own as the run
// asks for (-test.count), then ends the process with status 0 before go
// test reports any.
func BenchmarkExitZero(b *testing.B) {
	if b.N > 1 {
		for range 3 {
			fmt.Printf("BenchmarkExitZero-%d \t 1000 \t 0.001 ns/op\n", runtime.GOMAXPROCS(0))
		}
		os.Exit(0)
	}
}

// BenchmarkPrintsFail prints a line that starts as go test's failure
// report does, and passes.
func BenchmarkPrintsFail(b *testing.B) {
	for i := 0; i < b.N; i++ {
	}
	fmt.Println("--- FAIL: not a failure, a line the benchmark prints")
}
