package faulty

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

func BenchmarkOK(b *testing.B) {
	for i := 0; i < b.N; i++ {
	}
}

func BenchmarkPanic(b *testing.B) {
	if b.N > 1 {
		panic("fixture: boom")
	}
}

func BenchmarkExit(b *testing.B) {
	if b.N > 1 {
		os.Exit(3)
	}
}

func BenchmarkHang(b *testing.B) {
	if b.N > 1 {
		time.Sleep(time.Hour)
	}
}

func BenchmarkFatal(b *testing.B) {
	if b.N > 1 {
		b.Fatal("fixture: the benchmark failed")
	}
}

// BenchmarkLookAlike prints a line that reads as its own result.
func BenchmarkLookAlike(b *testing.B) {
	for i := 0; i < b.N; i++ {
	}
	if b.N > 1 {
		fmt.Printf("BenchmarkLookAlike-%d \t 1000 \t 1.0 ns/op\n", runtime.GOMAXPROCS(0))
	}
}
