package histgen

import "fmt"

// fixtureWork is the explain fixture's work.go: one op (Work) calls five
// functions, one of them (mix) inlined into its caller and one (shared)
// called from two places, with the rounds each runs.
const fixtureWork = `package tiny

// Work is one op of the fixture: its functions in turn.
func Work(x uint64) uint64 {
	x = hash(x, %d)
	x = parse(x, %d)
	x = encode(x, %d)
	x = shared(x, %d)
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

// parse steps x n times, then calls shared: shared is reached from Work
// and from parse.
//
//go:noinline
func parse(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = x*0x9e3779b97f4a7c15 + uint64(i)
		x ^= x >> 31
	}
	return shared(x, %d)
}

// mix is small enough to be inlined into encode.
func mix(x uint64) uint64 { return (x ^ x>>27) * 0x94d049bb133111eb }

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
// hash, parse, encode (mix), shared from Work, shared from parse.
var fixtureRounds = [5]int{400, 200, 160, 80, 80}

// FixturePlant is a planted slowdown of the explain fixture: one loop's
// rounds times Factor, whose time shows in Function.
type FixturePlant struct {
	Loop     int // the index into the fixture's rounds
	Factor   float64
	Function string // where the time goes, as pprof names it
}

// ExplainPlants are the explain fixture's planted slowdowns: in each of
// its functions, small and large, mix's through its inlined calls and
// shared's through either caller.
var ExplainPlants = []FixturePlant{
	{0, 1.08, "tiny.hash"}, {0, 1.25, "tiny.hash"}, {0, 1.5, "tiny.hash"},
	{1, 1.15, "tiny.parse"}, {1, 1.5, "tiny.parse"},
	{2, 1.2, "tiny.mix"}, {2, 1.6, "tiny.mix"},
	{3, 1.3, "tiny.shared"}, {4, 1.3, "tiny.shared"}, {3, 2, "tiny.shared"},
}

// ExplainFixture is the history of the explain fixture: the good end,
// then a commit of each plant (each against the good end's source, not
// on top of the one before), then aa commits of the good end's source
// again (A/A: another commit, the same code).
func ExplainFixture(plants []FixturePlant, aa int) (sources, subjects []string) {
	src := func(r [5]int) string { return fmt.Sprintf(fixtureWork, r[0], r[1], r[2], r[3], r[4]) }
	sources, subjects = []string{src(fixtureRounds)}, []string{"good: the fixture"}
	for i, p := range plants {
		r := fixtureRounds
		r[p.Loop] = int(float64(r[p.Loop])*p.Factor + 0.5)
		sources = append(sources, src(r))
		subjects = append(subjects, fmt.Sprintf("plant %d: loop %d ×%g, in %s", i+1, p.Loop, p.Factor, p.Function))
	}
	for i := range aa {
		sources = append(sources, src(fixtureRounds))
		subjects = append(subjects, fmt.Sprintf("note %d: the good end's code", i+1))
	}
	return sources, subjects
}
