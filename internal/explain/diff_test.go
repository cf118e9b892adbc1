package explain

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// fork1s is the ops of one second of the synthetic 1 µs op: 100 samples
// a fork.
const fork1s = 1_000_000

// A planted slowdown of one function, 10 % of the op, is named first,
// with the change and share it was given, on forks that differ by 2 % and
// hold 500 Poisson samples (5 s at runtime/pprof's 100 Hz), 5 pairs.
func TestDiffNamesThePlantedFunction(t *testing.T) {
	for _, tc := range []struct {
		leaf  string
		plant float64 // ns per op added to the leaf
	}{
		{"main.warm", 100}, // 10 % of the op, +40 % of the function
		{"main.cold", 100},
		{"main.small", 100}, // inlined into main.caller
	} {
		rng := rand.New(rand.NewPCG(1, uint64(tc.plant)))
		after := program()
		after[tc.leaf] += tc.plant
		base, exp := side(rng, 5, program(), 5*fork1s, 0.02), side(rng, 5, after, 5*fork1s, 0.02)
		r, err := Diff(base, exp, 0.05, measured((1000+tc.plant)/1000)) // the program's op is 1 µs
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.Whole-r.Base*tc.plant/1000) > 1e-9 {
			t.Errorf("%s: whole change %v, want the baseline's CPU %v times the row's change", tc.leaf, r.Whole, r.Base)
		}
		if err != nil {
			t.Fatal(err)
		}
		named := r.Named()
		if len(named) == 0 || named[0].Name != tc.leaf {
			t.Fatalf("%s +%g ns/op: named %v, want it first\n%s", tc.leaf, tc.plant, names(named), text(t, r))
		}
		f := named[0]
		if f.Flat.Lo > tc.plant || f.Flat.Hi < tc.plant {
			t.Errorf("%s: flat change %s does not cover the planted +%g ns/op", tc.leaf, f.Flat, tc.plant)
		}
		if math.IsNaN(f.Share) || f.Share < 0.5 || f.Share > 1.5 {
			t.Errorf("%s: share %.2f of the change, want about 1", tc.leaf, f.Share)
		}
		if r.Total.Lo > tc.plant || r.Total.Hi < tc.plant {
			t.Errorf("%s: whole change %s, want it to cover +%g", tc.leaf, r.Total, tc.plant)
		}
	}
}

// Inlined frames are attributed as pprof does: the flat time to the
// innermost function, the cumulative time to it and its inlining caller.
func TestDiffAttributesInlinedFrames(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	after := program()
	after["main.small"] += 200
	r, err := Diff(side(rng, 5, program(), 5*fork1s, 0.01), side(rng, 5, after, 5*fork1s, 0.01), 0.05, Level{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Function{}
	for _, f := range r.Functions {
		byName[f.Name] = f
	}
	small, caller, run, gc := byName["main.small"], byName["main.caller"], byName["main.run"], byName["runtime.gc"]
	if !small.Named || small.Flat.Mean < 150 || small.Cum.Mean < 150 {
		t.Errorf("main.small (inlined): %+v, want named with +200 flat and cum", small)
	}
	if caller.Base != 0 || caller.Exp != 0 || caller.Named || caller.Cum.Mean < 150 {
		t.Errorf("main.caller (the inlining caller): %+v, want no flat time, the callee's change in cum", caller)
	}
	var whole float64 // the leveled change: every function's flat
	for _, f := range r.Functions {
		whole += f.Flat.Mean
	}
	if run.Flat.Mean != 0 || math.Abs(run.Cum.Mean-(whole-gc.Flat.Mean)) > 1e-6 {
		t.Errorf("main.run: flat %v cum %v, want 0 and the whole change %.4g but runtime.gc's %v", run.Flat, run.Cum, whole, gc.Flat)
	}
}

// With no change, no function is named: 50 A/A comparisons of forks that
// differ by 5 % (more than Poisson noise: a test on sample counts alone
// would name functions), at most α of them with any name (here none may
// be more than 4: 8 % of 50).
func TestDiffNamesNothingWithoutAChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	any := 0
	for range 50 {
		r, err := Diff(side(rng, 5, program(), 5*fork1s, 0.05), side(rng, 5, program(), 5*fork1s, 0.05), 0.05, Level{})
		if err != nil {
			t.Fatal(err)
		}
		if n := r.Named(); len(n) > 0 {
			any++
			t.Logf("A/A named %v", names(n))
		}
	}
	if any > 4 {
		t.Errorf("%d of 50 A/A comparisons named a function, want at most 4 (α = 5 %%)", any)
	}
}

func TestDiffBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	two := side(rng, 2, program(), fork1s, 0)
	if _, err := Diff(two, two, 0.05, Level{}); err == nil {
		t.Error("2 pairs: no error")
	}
	base, exp := side(rng, 4, program(), fork1s, 0), side(rng, 3, program(), fork1s, 0)
	r, err := Diff(base, exp, 0.05, Level{})
	if err != nil || r.Pairs != 3 || len(r.Notes) == 0 {
		t.Errorf("4 against 3 forks: %v, pairs %d, notes %v; want 3 pairs and a note", err, r.Pairs, r.Notes)
	}
	empty := side(rng, 3, map[string]float64{}, fork1s, 0)
	if _, err := Diff(empty, base[:3], 0.05, Level{}); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("profiles without a sample: %v, want the window too short", err)
	}
	short := side(rng, 3, program(), fork1s/20, 0) // about 5 samples a fork
	if r, err := Diff(short, short, 0.05, Level{}); err != nil {
		t.Errorf("profiles of 5 samples: %v", err)
	} else if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "holds only") {
		t.Errorf("profiles of about 5 samples: notes %v, want one of few samples", r.Notes)
	}
	notCPU := side(rng, 3, program(), fork1s, 0)
	for _, f := range notCPU {
		f.Profile.SampleType[1].Type = "alloc_space"
	}
	if _, err := Diff(notCPU, notCPU, 0.05, Level{}); err == nil {
		t.Error("profiles without CPU time: no error")
	}
}

func names(fs []Function) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// Two sides built by different toolchains get a note saying so, and the
// diff is otherwise the same: the note does not change what is named.
// One toolchain, or a side whose programs did not say, gets none.
func TestDiffNotesTwoToolchains(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	after := program()
	after["main.warm"] += 100
	base, exp := side(rng, 5, program(), 5*fork1s, 0.02), side(rng, 5, after, 5*fork1s, 0.02)
	stamp := func(forks []Fork, v string) {
		for i := range forks {
			forks[i].GoVersion = v
		}
	}
	toolchainNote := func(r *Report) string {
		for _, n := range r.Notes {
			if strings.Contains(n, "toolchains") {
				return n
			}
		}
		return ""
	}
	for _, tc := range []struct {
		base, exp string
		note      bool
	}{
		{"go1.26.8", "go1.26.8", false},
		{"", "go1.26.8", false},
		{"go1.25.3", "go1.26.8", true},
	} {
		stamp(base, tc.base)
		stamp(exp, tc.exp)
		r, err := Diff(base, exp, 0.05, measured(1.03))
		if err != nil {
			t.Fatal(err)
		}
		note := toolchainNote(r)
		if (note != "") != tc.note {
			t.Errorf("baseline %q, experiment %q: note %q, want one: %v", tc.base, tc.exp, note, tc.note)
		}
		if tc.note && (!strings.Contains(note, "baseline go1.25.3") || !strings.Contains(note, "experiment go1.26.8")) {
			t.Errorf("the note does not name both toolchains: %q", note)
		}
		if named := r.Named(); len(named) == 0 || named[0].Name != "main.warm" {
			t.Errorf("baseline %q, experiment %q: named %v, want main.warm first", tc.base, tc.exp, names(named))
		}
	}
}

// Forks that ran faster or slower as a whole (a busy neighbour, the
// clock: here a 10 % spread, more than the samples' own noise at perf's
// rate, 10,000 a fork) move no function: each fork's functions keep their
// shares of its samples at the side's level. A 3 % slowdown of main.warm
// is then named first in at least 18 of 20 comparisons of 5 pairs
// (compared by each fork's own CPU per op, the spread hid it in most),
// and 50 A/A comparisons at that spread name a function in at most 4.
func TestDiffLevelsForksThatRanFasterOrSlower(t *testing.T) {
	const ops = 100 * fork1s // 10,000 samples of the 1 µs op
	first, any := 0, 0
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(4, seed))
		after := program()
		after["main.warm"] += 30
		r, err := Diff(side(rng, 5, program(), ops, 0.1), side(rng, 5, after, ops, 0.1), 0.05, measured(1.03))
		if err != nil {
			t.Fatal(err)
		}
		if n := r.Named(); len(n) > 0 && n[0].Name == "main.warm" {
			first++
		}
	}
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(5, seed))
		r, err := Diff(side(rng, 5, program(), ops, 0.1), side(rng, 5, program(), ops, 0.1), 0.05, Level{})
		if err != nil {
			t.Fatal(err)
		}
		if n := r.Named(); len(n) > 0 {
			any++
			t.Logf("A/A named %v", names(n))
		}
	}
	if first < 18 || any > 4 {
		t.Errorf("+3 %% in main.warm named first in %d of 20 (want 18), an A/A named a function in %d of 50 (want at most 4)", first, any)
	}
}

// A level is as uncertain as its interval says: 50 A/A comparisons whose
// measured change is noise (a ratio drawn around 1 with a spread of 3 %,
// its 95 % interval ±6 %, as a row's whose forks ran 2× slower now and
// then) name a function in at most 4. Taken as exact, a level off by a
// few percent moves every function by that much in every pair, and the
// pairs call each such shift significant.
func TestDiffWeighsTheLevelByItsInterval(t *testing.T) {
	const ops = 100 * fork1s
	any := 0
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(7, seed))
		ratio := math.Exp(0.03 * rng.NormFloat64())
		level := Level{Ratio: ratio, Lo: ratio / 1.06, Hi: ratio * 1.06, Alpha: 0.05}
		r, err := Diff(side(rng, 5, program(), ops, 0.02), side(rng, 5, program(), ops, 0.02), 0.05, level)
		if err != nil {
			t.Fatal(err)
		}
		if n := r.Named(); len(n) > 0 {
			any++
			t.Logf("A/A at a level of %.3f named %v", ratio, names(n))
		}
	}
	if any > 4 {
		t.Errorf("an A/A at a noisy level named a function in %d of 50, want at most 4", any)
	}
}

// measured is a level the measured forks found to ±0.5 %.
func measured(ratio float64) Level {
	return Level{Ratio: ratio, Lo: ratio / 1.005, Hi: ratio * 1.005, Alpha: 0.05, Changed: true}
}

// A function with less than MinTestedShare of the op on both sides
// together is not tested: the dozens a profile of 10,000 samples samples
// once or twice (here 30, one sample each) stay out of the correction (q
// 1), while the planted function is named as without them.
func TestDiffTestsFunctionsWithAShareOfTheOp(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	after := program()
	after["main.warm"] += 30
	base, exp := side(rng, 5, program(), 100*fork1s, 0.02), side(rng, 5, after, 100*fork1s, 0.02)
	for _, f := range append(base, exp...) {
		p := f.Profile
		for i := range 30 {
			fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: fmt.Sprintf("runtime.tiny%d", i)}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Address: uint64(0x100000 + i), Line: []profile.Line{{Function: fn}}}
			p.Function, p.Location = append(p.Function, fn), append(p.Location, loc)
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{1, samplePeriod}})
		}
	}
	r, err := Diff(base, exp, 0.05, measured(1.03))
	if err != nil {
		t.Fatal(err)
	}
	tiny := 0
	for _, f := range r.Functions {
		if strings.HasPrefix(f.Name, "runtime.tiny") {
			tiny++
			if f.Q != 1 || f.Named {
				t.Errorf("%s, %.2g ns/op a side, was tested: q %g", f.Name, f.Base, f.Q)
			}
		}
	}
	if n := r.Named(); tiny != 30 || len(n) == 0 || n[0].Name != "main.warm" {
		t.Errorf("%d tiny functions; named %v, want main.warm first", tiny, names(n))
	}
}

// A round whose fork failed on one side has no pair: the others pair by
// round, not by their place among the forks that worked, and a note says
// how many were paired.
func TestDiffPairsByRound(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	base, exp := side(rng, 5, program(), fork1s, 0), side(rng, 5, program(), fork1s, 0)
	exp = append(exp[:1:1], exp[2:]...) // round 2 failed on the experiment
	b, e := byRound(base, exp)
	var rb, re []int
	for i := range b {
		rb, re = append(rb, b[i].Round), append(re, e[i].Round)
	}
	if fmt.Sprint(rb) != "[1 3 4 5]" || fmt.Sprint(re) != "[1 3 4 5]" {
		t.Fatalf("pairs of rounds %v and %v, want [1 3 4 5] on both sides", rb, re)
	}
	r, err := Diff(base, exp, 0.05, Level{})
	if err != nil || r.Pairs != 4 || len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "the 4 rounds both have") {
		t.Errorf("5 against 4 forks: %v, %+v", err, r)
	}
}

// Load leaves out a fork that failed or measured no op, saying which, and
// reads the others.
func TestLoadLeavesOutFailedForks(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	path := filepath.Join(t.TempDir(), "cpu.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := synth(rng, program(), fork1s, 0).Profile.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	forks, failed, err := Load([]result.ProfileRun{
		{Kind: "cpu", Path: path, Ops: fork1s, Round: 3},
		{Kind: "cpu", Path: "missing", Round: 1, Err: errors.New("no sample inside the measured function")},
		{Kind: "cpu", Path: path, Ops: 0, Round: 2},
		{Kind: "cpu", Path: path, Ops: fork1s, Round: 4},
	})
	if err != nil || len(forks) != 2 || forks[0].Round != 3 || forks[1].Round != 4 || len(failed) != 2 ||
		!strings.Contains(failed[0], "profiling fork 1 failed: no sample") || !strings.Contains(failed[1], "profiling fork 2 measured no op") {
		t.Errorf("Load: %v, forks %+v, failed %q", err, forks, failed)
	}
	if _, _, err := Load([]result.ProfileRun{{Kind: "cpu", Path: filepath.Join(t.TempDir(), "absent"), Ops: 1, Round: 1}}); err == nil {
		t.Error("an unreadable profile: no error")
	}
}
