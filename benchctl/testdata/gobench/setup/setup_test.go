// Package setup has a benchmark whose setup is paid at every b.N go test
// runs it at, as google/btree's Get rebuilds its tree under StopTimer.
package setup

import (
	"testing"
	"time"
)

var (
	calls int
	sink  int
)

// BenchmarkRebuild builds its fixture (2 ms, untimed) every time go test
// calls it, and reports how often this process has called it so far.
func BenchmarkRebuild(b *testing.B) {
	calls++
	b.StopTimer()
	time.Sleep(2 * time.Millisecond)
	b.StartTimer()
	for i := 0; i < b.N; i++ {
		for j := range 100 {
			sink += i ^ j
		}
	}
	b.ReportMetric(float64(calls), "calls")
}
