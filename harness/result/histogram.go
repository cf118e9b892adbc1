package result

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// DecodeHistogram decodes an [OpStats.Hist] value: an HdrHistogram of
// per-op latencies in ns, in its V2 compressed encoding.
func DecodeHistogram(b []byte) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decode latency histogram: %w", err)
	}
	return h, nil
}

// Percentiles are the latency percentiles SampleTime reports, as JMH does.
var Percentiles = []float64{0, 50, 90, 95, 99, 99.9, 99.99, 100}
