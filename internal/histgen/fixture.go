package histgen

import "fmt"

// fixtureWork is the explain fixture's work.go: one op (Work) calls four
// functions, one of them (mix) inlined into its caller, one (shared)
// called from two places, and one (parse) that allocates where a plant
// makes it, with the rounds each runs (the verbs' indexes are
// fixtureRounds').
const fixtureWork = `package tiny

// Work is one op of the fixture: its functions in turn.
func Work(x uint64) uint64 {
	x = hash(x, %[1]d)
	x = parse(x, %[2]d)
	x = encode(x, %[3]d)
	x = shared(x, %[5]d)
	return x
}

// hash mixes x n times.
//
//go:noinline
func hash(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x ^= x >> 29
		x *= 0xbf58476d1ce4e5b9
	}
	return x
}

// kept holds what parse allocates, so that it escapes.
var kept *[4]uint64

// parse steps x n times, allocates its allocation rounds' objects, then
// calls shared: shared is reached from Work and from parse.
//
//go:noinline
func parse(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = x*0x9e3779b97f4a7c15 + uint64(i)
		x ^= x >> 31
	}
	for i := 0; i < %[7]d; i++ {
		kept = &[4]uint64{x, uint64(i)}
	}
	return shared(x, %[6]d)
}

// mix is small enough to be inlined into encode: its rounds are its own.
func mix(x uint64) uint64 {
	for j := 0; j < %[4]d; j++ {
		x = (x ^ x>>27) * 0x94d049bb133111eb
	}
	return x
}

// encode runs mix n times: its time is mix's, inlined.
//
//go:noinline
func encode(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = mix(x) + uint64(i)
	}
	return x
}

// shared rotates x n times.
//
//go:noinline
func shared(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = (x<<7 | x>>57) ^ 0x2545f4914f6cdd1d
		x *= 3
	}
	return x
}
`

// fixtureRounds are the rounds of the fixture's loops at its good end:
// hash, parse, encode, mix's own, shared from Work, shared from parse,
// and parse's allocations (none).
var fixtureRounds = [7]int{400, 200, 160, 2, 80, 80, 0}

// AllocLoop is the index of parse's allocation rounds in the fixture's
// rounds.
const AllocLoop = 6

// FixturePlant is a planted slowdown of the explain fixture: one loop's
// rounds times Factor, or set to Rounds when it is above 0, whose time
// (or, for AllocLoop, whose allocations) shows in Function.
type FixturePlant struct {
	Loop     int // the index into the fixture's rounds
	Factor   float64
	Rounds   int    `json:",omitempty"`
	Function string // where the time goes, as pprof names it
}

// Allocates reports whether the plant adds allocations, not time alone.
func (p FixturePlant) Allocates() bool { return p.Loop == AllocLoop }

// ExplainPlants are the explain fixture's planted slowdowns, 3 % to 20 %
// of an op's time: in each of its functions, small and large, mix's in
// its inlined code, shared's through either caller, and parse's
// allocations (three objects of 32 bytes an op).
var ExplainPlants = []FixturePlant{
	{Loop: 0, Factor: 1.08, Function: "tiny.hash"}, {Loop: 0, Factor: 1.25, Function: "tiny.hash"}, {Loop: 0, Factor: 1.5, Function: "tiny.hash"},
	{Loop: 1, Factor: 1.15, Function: "tiny.parse"}, {Loop: 1, Factor: 1.5, Function: "tiny.parse"},
	{Loop: 3, Factor: 1.5, Function: "tiny.mix"}, {Loop: 3, Factor: 2, Function: "tiny.mix"},
	{Loop: 4, Factor: 2, Function: "tiny.shared"}, {Loop: 5, Factor: 2, Function: "tiny.shared"},
	{Loop: AllocLoop, Rounds: 3, Function: "tiny.parse"},
}

// String says what the plant changes.
func (p FixturePlant) String() string {
	if p.Rounds > 0 {
		return fmt.Sprintf("loop %d set to %d in %s", p.Loop, p.Rounds, p.Function)
	}
	return fmt.Sprintf("loop %d ×%g in %s", p.Loop, p.Factor, p.Function)
}

// ExplainFixture is the history of the explain fixture: the good end,
// then a commit of each plant (each against the good end's source, not
// on top of the one before), then aa commits of the good end's source
// again (A/A: another commit, the same code).
func ExplainFixture(plants []FixturePlant, aa int) (sources, subjects []string) {
	src := func(r [7]int) string { return fmt.Sprintf(fixtureWork, r[0], r[1], r[2], r[3], r[4], r[5], r[6]) }
	sources, subjects = []string{src(fixtureRounds)}, []string{"good: the fixture"}
	for i, p := range plants {
		r := fixtureRounds
		if r[p.Loop] = int(float64(r[p.Loop])*p.Factor + 0.5); p.Rounds > 0 {
			r[p.Loop] = p.Rounds
		}
		sources = append(sources, src(r))
		subjects = append(subjects, fmt.Sprintf("plant %d: %s", i+1, p))
	}
	for i := range aa {
		sources = append(sources, src(fixtureRounds))
		subjects = append(subjects, fmt.Sprintf("note %d: the good end's code", i+1))
	}
	return sources, subjects
}
