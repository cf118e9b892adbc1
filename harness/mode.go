package harness

import "github.com/ledgerbench/ledgerbench/harness/result"

// Mode is what an iteration measures, after JMH's benchmark modes; it is
// the same type as the results' mode.
type Mode = result.Mode

// The modes (JMH's names in parentheses in their doc).
const (
	// AverageTime reports the average time per op in ns/op (JMH "avgt").
	AverageTime = result.AverageTime
	// Throughput reports ops per second summed over all goroutines (JMH "thrpt").
	Throughput = result.Throughput
	// SampleTime times every op and reports the latency distribution:
	// mean and percentiles from an HdrHistogram (JMH "sample"). Each op
	// pays one clock read, whose measured cost is reported too.
	SampleTime = result.SampleTime
	// SingleShot times one invocation per iteration with no warmup by
	// default: a cold start (JMH "ss").
	SingleShot = result.SingleShot
)
