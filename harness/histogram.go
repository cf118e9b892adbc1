package harness

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// histogram records per-op latencies in ns from 1 ns to one hour with 3
// significant digits. It is not safe for concurrent use: one per worker.
type histogram struct{ h *hdrhistogram.Histogram }

func newHistogram() *histogram {
	return &histogram{h: hdrhistogram.New(1, int64(time.Hour), 3)}
}

func (h *histogram) record(ns int64) {
	if ns < 1 {
		ns = 1
	}
	if h.h.RecordValue(ns) != nil {
		_ = h.h.RecordValue(h.h.HighestTrackableValue())
	}
}
