package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// jmhResult is one element of JMH's JSON result array (the schema JMH's
// JSONResultFormat writes and JMH Visualizer reads).
type jmhResult struct {
	JMHVersion            string                `json:"jmhVersion"`
	Benchmark             string                `json:"benchmark"`
	Mode                  string                `json:"mode"`
	Threads               int                   `json:"threads"`
	Forks                 int                   `json:"forks"`
	JVM                   string                `json:"jvm"`
	JVMArgs               []string              `json:"jvmArgs"`
	JDKVersion            string                `json:"jdkVersion"`
	VMName                string                `json:"vmName"`
	VMVersion             string                `json:"vmVersion"`
	WarmupIterations      int                   `json:"warmupIterations"`
	WarmupTime            string                `json:"warmupTime"`
	WarmupBatchSize       int                   `json:"warmupBatchSize"`
	MeasurementIterations int                   `json:"measurementIterations"`
	MeasurementTime       string                `json:"measurementTime"`
	MeasurementBatchSize  int                   `json:"measurementBatchSize"`
	Params                map[string]string     `json:"params,omitempty"`
	PrimaryMetric         jmhMetric             `json:"primaryMetric"`
	SecondaryMetrics      map[string]*jmhMetric `json:"secondaryMetrics"`
}

type jmhMetric struct {
	Score            jmhFloat            `json:"score"`
	ScoreError       jmhFloat            `json:"scoreError"`
	ScoreConfidence  [2]jmhFloat         `json:"scoreConfidence"`
	ScorePercentiles map[string]jmhFloat `json:"scorePercentiles"`
	ScoreUnit        string              `json:"scoreUnit"`
	RawData          [][]jmhFloat        `json:"rawData"`
	// Beyond JMH's schema: the spread of the forks' means (what
	// scoreError is computed from) and of the iterations within a fork.
	ForkSpread      jmhFloat `json:"forkSpread"`
	IterationSpread jmhFloat `json:"iterationSpread"`
}

// jmhFloat encodes NaN and infinities as JMH does: as the strings "NaN",
// "Infinity" and "-Infinity" (JSON has no such numbers).
type jmhFloat float64

func (f jmhFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Infinity"`), nil
	}
	return json.Marshal(v)
}

func (f *jmhFloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*f = jmhFloat(math.NaN())
		return nil
	case `"Infinity"`:
		*f = jmhFloat(math.Inf(1))
		return nil
	case `"-Infinity"`:
		*f = jmhFloat(math.Inf(-1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("jmh score %s: %w", b, err)
	}
	*f = jmhFloat(v)
	return nil
}

func toJMH(m Metric) *jmhMetric {
	j := &jmhMetric{
		Score:            jmhFloat(m.Score),
		ScoreError:       jmhFloat(m.Error),
		ScoreConfidence:  [2]jmhFloat{jmhFloat(m.Lo), jmhFloat(m.Hi)},
		ScorePercentiles: map[string]jmhFloat{},
		ScoreUnit:        m.Unit,
		RawData:          [][]jmhFloat{},
		ForkSpread:       jmhFloat(m.ForkSpread),
		IterationSpread:  jmhFloat(m.IterationSpread),
	}
	for p, v := range m.Percentiles {
		j.ScorePercentiles[percentileKey(p)] = jmhFloat(v)
	}
	for _, fork := range m.Raw {
		row := make([]jmhFloat, len(fork))
		for i, v := range fork {
			row[i] = jmhFloat(v)
		}
		j.RawData = append(j.RawData, row)
	}
	return j
}

// WriteJMH writes one JMH result object per case that has measurements.
// Benchmarks are named "<import path>.<Name>", the Go package that
// declared the benchmark in place of JMH's class ("example.com/x/bench.Add"
// for BenchmarkAdd); group ops and allocation figures are secondary
// metrics.
func WriteJMH(w io.Writer, h Header, run *result.Run) error {
	o := run.Config
	out := []jmhResult{}
	for _, cr := range run.Cases {
		s := Summarize(cr)
		if s.Primary.N == 0 {
			continue
		}
		warm := o.Warmup
		if cr.Mode == result.SingleShot && !o.WarmupExplicit {
			warm.Count = 0
		}
		r := jmhResult{
			JMHVersion: "benchctl " + h.BenchctlVersion,
			Benchmark:  jmhName(cr.Case),
			Mode:       string(cr.Mode), Threads: s.Threads, Forks: s.Forks,
			JVM: "go", JVMArgs: []string{}, JDKVersion: h.Go, VMName: "gc", VMVersion: h.Go + " " + runtime.GOARCH,
			WarmupIterations: warm.Count, WarmupTime: jmhTime(warm), WarmupBatchSize: 1,
			MeasurementIterations: o.Measure.Count, MeasurementTime: jmhTime(o.Measure), MeasurementBatchSize: 1,
			PrimaryMetric:    *toJMH(s.Primary),
			SecondaryMetrics: map[string]*jmhMetric{},
		}
		if len(s.Params) > 0 {
			r.Params = map[string]string{}
			for _, p := range s.Params {
				r.Params[p.Name] = p.Value
			}
		}
		for _, m := range s.Secondary {
			r.SecondaryMetrics["·"+m.Name] = toJMH(m)
		}
		for _, m := range s.Ops {
			r.SecondaryMetrics[m.Name] = toJMH(m)
		}
		out = append(out, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	return enc.Encode(out)
}

func jmhTime(s result.IterSpec) string {
	if s.Ops > 0 {
		return fmt.Sprintf("%d ops", s.Ops)
	}
	return strings.TrimSpace(fmt.Sprintf("%g s", s.Time.Seconds()))
}

// jmhName is the JMH benchmark name of a case: the declaring package's
// import path (the family when it is unknown) and the benchmark's name.
func jmhName(c result.Case) string {
	pkg := c.Pkg
	if pkg == "" {
		pkg = c.Family
	}
	return pkg + "." + strings.TrimPrefix(c.Benchmark, "Benchmark")
}
