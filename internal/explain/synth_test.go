package explain

import (
	"math"
	"math/rand/v2"

	"github.com/google/pprof/profile"
)

// samplePeriod is runtime/pprof's: one sample per 10 ms of CPU.
const samplePeriod = 10_000_000

// frames are the synthetic program's stacks by leaf: from the leaf to
// the root, each a location of one or more lines (inlined functions
// innermost first).
var frames = map[string][][]string{
	"main.hot":   {{"main.hot"}, {"main.run"}, {"runtime.main"}},
	"main.warm":  {{"main.warm"}, {"main.run"}, {"runtime.main"}},
	"main.cold":  {{"main.cold"}, {"main.helper"}, {"main.run"}, {"runtime.main"}},
	"main.small": {{"main.small", "main.caller"}, {"main.run"}, {"runtime.main"}}, // small inlined into caller
	"runtime.gc": {{"runtime.gc"}, {"runtime.bgsweep"}},
}

// synth is one profiling fork of ops ops whose leaves cost flat ns per op
// on average: each leaf's samples are Poisson around that, after the
// whole fork's speed was drawn with a spread of forkSD (forks differ).
func synth(rng *rand.Rand, flat map[string]float64, ops int64, forkSD float64) Fork {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     samplePeriod,
	}
	fns := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		if f := fns[name]; f != nil {
			return f
		}
		f := &profile.Function{ID: uint64(len(fns) + 1), Name: name, SystemName: name, Filename: "main.go"}
		fns[name] = f
		p.Function = append(p.Function, f)
		return f
	}
	locs := map[string]*profile.Location{}
	loc := func(lines []string) *profile.Location {
		key := lines[0]
		if l := locs[key]; l != nil {
			return l
		}
		l := &profile.Location{ID: uint64(len(locs) + 1), Address: uint64(0x1000 * (len(locs) + 1))}
		for i, n := range lines {
			l.Line = append(l.Line, profile.Line{Function: fn(n), Line: int64(10 + i)})
		}
		locs[key] = l
		p.Location = append(p.Location, l)
		return l
	}
	speed := math.Exp(forkSD * rng.NormFloat64())
	for _, leaf := range []string{"main.hot", "main.warm", "main.cold", "main.small", "runtime.gc"} {
		ns := flat[leaf]
		if ns == 0 {
			continue
		}
		n := poisson(rng, ns*speed*float64(ops)/samplePeriod)
		if n == 0 {
			continue
		}
		s := &profile.Sample{Value: []int64{n, n * samplePeriod}}
		for _, lines := range frames[leaf] {
			s.Location = append(s.Location, loc(lines))
		}
		p.Sample = append(p.Sample, s)
	}
	return Fork{Path: "synthetic", Ops: ops, Profile: p}
}

// poisson draws a Poisson count of mean m (normal above 50).
func poisson(rng *rand.Rand, m float64) int64 {
	if m > 50 {
		return max(0, int64(math.Round(m+math.Sqrt(m)*rng.NormFloat64())))
	}
	l, k, prod := math.Exp(-m), int64(0), rng.Float64()
	for prod > l {
		k++
		prod *= rng.Float64()
	}
	return k
}

// side is n forks of one side, rounds numbered from 1.
func side(rng *rand.Rand, n int, flat map[string]float64, ops int64, forkSD float64) []Fork {
	var out []Fork
	for i := range n {
		f := synth(rng, flat, ops, forkSD)
		f.Round = i + 1
		out = append(out, f)
	}
	return out
}

// program is the synthetic benchmark's flat cost per op by leaf, in ns:
// 1 µs an op, most of it in main.hot.
func program() map[string]float64 {
	return map[string]float64{"main.hot": 500, "main.warm": 250, "main.cold": 120, "main.small": 80, "runtime.gc": 50}
}
