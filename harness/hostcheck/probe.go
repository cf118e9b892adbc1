package hostcheck

import (
	"sync/atomic"
	"time"
)

// probeRounds sizes one probe run: 4 dependent shift-add pairs per round,
// about 8 cycles, so 100k rounds take about 0.4 ms at 2 GHz. A probe keeps
// the fastest of probeRuns runs: a preempted or interrupted run is slow,
// while a lower clock slows every run.
const (
	probeRounds = 100_000
	probeRuns   = 3
)

//go:noinline
func probeChain(n int, x uint64) uint64 {
	for i := 0; i < n; i++ {
		x += x >> 1
		x += x >> 3
		x += x >> 5
		x += x >> 7
	}
	return x
}

// probeSink keeps the chains observable; Probe may run on many goroutines.
var probeSink atomic.Uint64

// Probe runs a fixed chain of dependent adds and returns its speed in
// dependent ops per microsecond: on a core that retires one such op per
// cycle that is the effective clock in MHz. It is the only evidence of a
// moving clock where cpufreq is not exposed (virtual machines): the harness
// runs it before and after each iteration and flags iterations whose speed
// moved beyond a tolerance.
func Probe() float64 {
	best := time.Duration(0)
	for range probeRuns {
		start := time.Now()
		probeSink.Add(probeChain(probeRounds, probeSink.Load()|1))
		if el := time.Since(start); best == 0 || el < best {
			best = el
		}
	}
	if best <= 0 {
		return 0
	}
	return float64(probeRounds*8) / (float64(best.Nanoseconds()) / 1e3)
}
