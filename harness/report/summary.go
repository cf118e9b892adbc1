package report

import (
	"math"
	"sort"
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/aclements/go-moremath/stats"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// Confidence is the level of the score's error interval, as JMH prints it.
const Confidence = 0.999

// Metric is one metric of one case: the mean over every measurement
// iteration of every fork, as JMH scores, and an error from the forks: the
// half width of the Student-t interval at [Confidence] of the forks' means,
// one per fork (NaN with fewer than 2 forks). Iterations of one process
// share its memory layout, heap and scheduling; an error computed from
// them as if they were independent is too narrow whenever processes
// differ, so the fork is the unit of the error.
type Metric struct {
	Name  string // "" for the primary score; secondary metrics are named
	Unit  string
	Score float64
	Error float64
	Lo    float64
	Hi    float64
	N     int
	// ForkSpread is the standard deviation of the forks' means;
	// IterationSpread the pooled standard deviation of the iterations
	// around their fork's mean (NaN when not computable).
	ForkSpread, IterationSpread float64
	// Raw holds the values per fork, in fork order.
	Raw [][]float64
	// Percentiles maps a percentile (0…100) to its value: of the per-op
	// latencies in SampleTime mode, else of the raw values.
	Percentiles map[float64]float64
}

// Summary is one case's results.
type Summary struct {
	Name      string // benchfmt name with parameters
	ID        string
	Family    string
	Mode      result.Mode
	Threads   int
	Forks     int
	Params    result.Params
	Primary   Metric
	Secondary []Metric
	// Ops holds the per-op primary metrics of a group benchmark.
	Ops      []Metric
	Flagged  int // measurement iterations the frequency probe flagged
	Failures int
}

// Summarize summarizes the measurement iterations of one case.
func Summarize(cr *result.CaseResult) Summary {
	s := Summary{
		Name: cr.Case.Name(), ID: cr.Case.ID, Family: cr.Case.Family,
		Mode: cr.Mode, Params: cr.Case.Params, Failures: len(cr.Failures),
	}
	its := measured(cr.Iterations)
	forks := map[int]bool{}
	for _, it := range its {
		forks[it.Fork] = true
		s.Threads = it.Total.Workers
		if it.Flagged {
			s.Flagged++
		}
	}
	s.Forks = len(forks)
	s.Primary = collect("", cr.Mode.Unit(), its, func(it *result.Iteration) (float64, bool) {
		return it.Total.Score(cr.Mode), true
	})
	if cr.Mode == result.SampleTime {
		s.Primary.Percentiles = latencyPercentiles(its, func(it *result.Iteration) []byte { return it.Total.Hist })
	}
	add := func(name, unit string, get func(*result.Iteration) (float64, bool)) {
		if m := collect(name, unit, its, get); m.N > 0 {
			s.Secondary = append(s.Secondary, m)
		}
	}
	add("B/op", "B/op", func(it *result.Iteration) (float64, bool) { return it.BytesPerOp(), true })
	add("allocs/op", "allocs/op", func(it *result.Iteration) (float64, bool) { return it.AllocsPerOp(), true })
	add("gc/op", "gc/op", func(it *result.Iteration) (float64, bool) { return it.GCsPerOp(), !it.GoTest })
	for _, unit := range metricUnits(its) {
		add(unit, unit, func(it *result.Iteration) (float64, bool) {
			v, ok := it.Total.Metrics[unit]
			return v, ok
		})
	}
	if len(its) > 0 {
		for oi, op := range its[0].Ops {
			m := collect(op.Name, cr.Mode.Unit(), its, func(it *result.Iteration) (float64, bool) {
				if oi >= len(it.Ops) {
					return 0, false
				}
				return it.Ops[oi].Score(cr.Mode), true
			})
			if cr.Mode == result.SampleTime {
				m.Percentiles = latencyPercentiles(its, func(it *result.Iteration) []byte { return it.Ops[oi].Hist })
			}
			s.Ops = append(s.Ops, m)
		}
	}
	return s
}

// measured returns the measurement iterations sorted by fork and index.
func measured(all []result.Iteration) []*result.Iteration {
	var out []*result.Iteration
	for i := range all {
		if !all[i].Warmup {
			out = append(out, &all[i])
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Fork != out[j].Fork {
			return out[i].Fork < out[j].Fork
		}
		return out[i].Index < out[j].Index
	})
	return out
}

func metricUnits(its []*result.Iteration) []string {
	seen := map[string]bool{}
	var units []string
	for _, it := range its {
		for u := range it.Total.Metrics {
			if !seen[u] {
				seen[u] = true
				units = append(units, u)
			}
		}
	}
	sort.Strings(units)
	return units
}

func collect(name, unit string, its []*result.Iteration, get func(*result.Iteration) (float64, bool)) Metric {
	m := Metric{Name: name, Unit: unit}
	var all []float64
	lastFork := math.MinInt
	for _, it := range its {
		v, ok := get(it)
		if !ok {
			continue
		}
		if it.Fork != lastFork {
			m.Raw = append(m.Raw, nil)
			lastFork = it.Fork
		}
		m.Raw[len(m.Raw)-1] = append(m.Raw[len(m.Raw)-1], v)
		all = append(all, v)
	}
	m.N = len(all)
	m.ForkSpread, m.IterationSpread = math.NaN(), math.NaN()
	if m.N == 0 {
		return m
	}
	m.Score = stats.Mean(all)
	var means []float64
	var ss float64
	for _, fork := range m.Raw {
		mean := stats.Mean(fork)
		means = append(means, mean)
		for _, v := range fork {
			ss += (v - mean) * (v - mean)
		}
	}
	if n := m.N - len(means); n > 0 {
		m.IterationSpread = math.Sqrt(ss / float64(n))
	}
	m.Error, m.Lo, m.Hi = math.NaN(), math.NaN(), math.NaN()
	if len(means) >= 2 {
		m.ForkSpread = stats.StdDev(means)
		if _, e := verdict.MeanInterval(means, Confidence); !math.IsInf(e, 0) && !math.IsNaN(e) {
			m.Error, m.Lo, m.Hi = e, m.Score-e, m.Score+e
		}
	}
	sample := stats.Sample{Xs: all}.Copy().Sort()
	m.Percentiles = map[float64]float64{}
	for _, p := range result.Percentiles {
		m.Percentiles[p] = sample.Quantile(p / 100)
	}
	return m
}

// latencyPercentiles merges the latency histograms of the iterations.
func latencyPercentiles(its []*result.Iteration, get func(*result.Iteration) []byte) map[float64]float64 {
	var merged *hdrhistogram.Histogram
	for _, it := range its {
		b := get(it)
		if len(b) == 0 {
			continue
		}
		h, err := result.DecodeHistogram(b)
		if err != nil {
			continue
		}
		if merged == nil {
			merged = h
		} else {
			merged.Merge(h)
		}
	}
	if merged == nil || merged.TotalCount() == 0 {
		return nil
	}
	out := map[float64]float64{}
	for _, p := range result.Percentiles {
		out[p] = float64(merged.ValueAtQuantile(p))
	}
	return out
}

// percentileKey formats a percentile as JMH's JSON does ("99.9").
func percentileKey(p float64) string {
	s := strconv.FormatFloat(p, 'f', -1, 64)
	if p == math.Trunc(p) {
		s += ".0"
	}
	return s
}
