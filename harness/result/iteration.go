package result

import "math"

// Iteration is the result of one warmup or measurement iteration of one
// fork, as the worker process reports it.
type Iteration struct {
	Fork int `json:"fork"`
	// ScheduledUnixNano, in a duet, is the instant the iteration was
	// scheduled to start at, the same on both sides (0 when it was not).
	ScheduledUnixNano int64 `json:"scheduled,omitempty"`
	Index             int   `json:"index"` // 0-based within its phase
	Warmup            bool  `json:"warmup,omitempty"`
	// WallNs is the control goroutine's wall time of the whole iteration,
	// ramp-up and ramp-down included.
	WallNs int64 `json:"wallNs"`
	// Total covers every worker; Ops has one entry per op of a group
	// benchmark, in declaration order (empty for a symmetric benchmark).
	Total OpStats   `json:"total"`
	Ops   []OpStats `json:"ops,omitempty"`
	// Executed counts every op executed during the iteration, ramp-up,
	// ramp-down and batch calibration included; allocation figures are
	// divided by it. Counted is set for an iteration of a fixed op count
	// (or a single shot), whose allocation figures are exact.
	Executed int64 `json:"executed"`
	Counted  bool  `json:"counted,omitempty"`
	// GoTest is set for one result line of a go test benchmark: its
	// time per op and B/op and allocs/op are the test binary's own
	// figures (AllocBytes and Allocs hold them times Executed, b.N), and it
	// has no GC count, frequency probe or wall time of its own (WallNs is
	// its ns/op times b.N).
	GoTest     bool   `json:"goTest,omitempty"`
	AllocBytes uint64 `json:"allocBytes"`
	Allocs     uint64 `json:"allocs"`
	GCs        uint32 `json:"gcs"`
	// ProbeBefore and ProbeAfter are the frequency probe's effective speed
	// (simple dependent ops per µs, about the clock in MHz) around the
	// iteration; Flagged is set when they differ by more than the tolerance.
	ProbeBefore float64 `json:"probeBefore"`
	ProbeAfter  float64 `json:"probeAfter"`
	Flagged     bool    `json:"flagged,omitempty"`
	// TimerNs is the measured cost of one clock read in SampleTime mode.
	TimerNs float64 `json:"timerNs,omitempty"`
	// StartUnixNano is the wall clock when the workers were released: the
	// parent measures a fork's start-up (exec to first iteration) with it.
	StartUnixNano int64 `json:"startUnixNano"`
	// TempC is the hottest thermal zone after the iteration (0: no zones);
	// StealPct the CPU steal time during it.
	TempC    float64 `json:"tempC,omitempty"`
	StealPct float64 `json:"stealPct,omitempty"`
}

// OpStats is what the workers of one op (or all workers) measured.
type OpStats struct {
	Name    string `json:"name,omitempty"`
	Workers int    `json:"workers"`
	// Ops is the number of ops in the measured window, summed over workers.
	Ops int64 `json:"ops"`
	// NsPerOp is the mean over workers of each worker's measured time per
	// op (JMH's AverageTime across threads); OpsPerSec is the sum over
	// workers of each worker's ops per second (JMH's Throughput).
	NsPerOp   float64 `json:"nsPerOp"`
	OpsPerSec float64 `json:"opsPerSec"`
	// Metrics are the custom counters per measured op, by unit.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Hist is the encoded HdrHistogram of per-op latencies in ns
	// (SampleTime only).
	Hist []byte `json:"hist,omitempty"`
}

// Score is the primary score of s in mode m, in m.Unit().
func (s *OpStats) Score(m Mode) float64 {
	if m == Throughput {
		return s.OpsPerSec
	}
	return s.NsPerOp
}

// Drift is the relative change of the frequency probe over the iteration.
func (it *Iteration) Drift() float64 {
	if it.ProbeBefore <= 0 || it.ProbeAfter <= 0 {
		return 0
	}
	return math.Abs(it.ProbeAfter-it.ProbeBefore) / it.ProbeBefore
}

// The resolution of a timed iteration's allocation figures: the runtime
// allocates in the background (timers, GC workers, the harness's own
// goroutine starts) a few times per iteration whatever the op does, so an
// iteration that counted no more than this, spread over millions of ops,
// measured nothing of the op. Its figures read as zero (never as
// 1.287e-07 B/op, from which a percentage change would be computed); the
// exact counts stay in the iteration (AllocBytes, Allocs, GCs) and in the
// results' telemetry.
const (
	BackgroundBytes  = 4 << 10
	BackgroundAllocs = 32
)

// BelowResolution reports whether the iteration's allocations are within
// the background's (see BackgroundBytes). Counted iterations (a fixed op
// count) are exact and never are.
func (it *Iteration) BelowResolution() bool {
	return !it.Counted && it.AllocBytes < BackgroundBytes && it.Allocs < BackgroundAllocs
}

// BytesPerOp, AllocsPerOp and GCsPerOp are the allocation figures per
// executed op: zero for an iteration below their resolution.
//
// Above the resolution, the background still adds up to BackgroundBytes
// (BackgroundAllocs) to a timed iteration: a figure whose excess over a
// whole number per op is within that, 64.0003 B/op over 10 million ops,
// reads as the whole number (64), so two runs of an op that allocates 64
// bytes never differ by the background's share.
func (it *Iteration) BytesPerOp() float64 {
	return it.resolved(float64(it.AllocBytes), BackgroundBytes)
}
func (it *Iteration) AllocsPerOp() float64 {
	return it.resolved(float64(it.Allocs), BackgroundAllocs)
}
func (it *Iteration) GCsPerOp() float64 { return it.resolved(float64(it.GCs), 0) }

func (it *Iteration) resolved(v, background float64) float64 {
	if it.BelowResolution() {
		return 0
	}
	x := perOp(v, it.Executed)
	if !it.Counted && background > 0 && it.Executed > 0 {
		if whole := math.Floor(x); x-whole <= background/float64(it.Executed) {
			return whole
		}
	}
	return x
}

func perOp(v float64, ops int64) float64 {
	if ops <= 0 {
		return 0
	}
	return v / float64(ops)
}
