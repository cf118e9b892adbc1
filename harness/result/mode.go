package result

import (
	"fmt"
	"strings"
)

// Mode is what an iteration measures, after JMH's benchmark modes.
type Mode string

const (
	// AverageTime reports the average time per op in ns/op (JMH "avgt").
	AverageTime Mode = "avgt"
	// Throughput reports ops per second summed over all goroutines (JMH "thrpt").
	Throughput Mode = "thrpt"
	// SampleTime times every op and reports the latency distribution:
	// mean and percentiles p50…p99.99 from an HdrHistogram (JMH "sample").
	// Each op pays one clock read, whose measured cost is reported too.
	SampleTime Mode = "sample"
	// SingleShot times one invocation per iteration with no warmup by
	// default: a cold start (JMH "ss").
	SingleShot Mode = "ss"
)

// Modes lists the valid modes in the order they are documented.
var Modes = []Mode{AverageTime, Throughput, SampleTime, SingleShot}

// ParseMode parses a mode name as printed by [Mode.String].
func ParseMode(s string) (Mode, error) {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		if string(m) == s {
			return m, nil
		}
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown mode %q (valid: %s)", s, strings.Join(names, ", "))
}

func (m Mode) String() string { return string(m) }

// Unit is the unit of the mode's primary score.
func (m Mode) Unit() string {
	if m == Throughput {
		return "ops/s"
	}
	return "ns/op"
}
