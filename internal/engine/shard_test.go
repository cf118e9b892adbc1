package engine_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// shardCases: a benchmark comparing two implementations over 6 sizes (6
// groups of 2 cases), one of a single implementation over 5 sizes, and
// a single-shot one (no warmup: a cheaper case).
func shardCases(t *testing.T) []engine.Case {
	t.Helper()
	setup := func(*harness.Trial) error { return nil }
	axis := &harness.Benchmark{Family: "f", Name: "Axis", Params: []harness.Param{
		{Name: "impl", Values: []string{"skiplist", "paged"}, Enum: true, Baseline: "skiplist"},
		{Name: "n", Values: []string{"1", "2", "3", "4", "5", "6"}, Kind: harness.Int},
	}, Setup: setup}
	plain := &harness.Benchmark{Family: "f", Name: "Plain", Params: []harness.Param{
		{Name: "n", Values: []string{"1", "2", "3", "4", "5"}, Kind: harness.Int},
	}, Setup: setup}
	shot := &harness.Benchmark{Family: "f", Name: "Shot", Mode: result.SingleShot, Setup: setup}
	cases, err := engine.Cases([]*harness.Benchmark{axis, plain, shot}, nil, engine.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestShardOf: for 1 to 12 shares of 18 cases in 12 groups, the shares
// are disjoint, cover every case, keep each case's order and each
// implementation pair together, are the same when dealt again, and
// differ in planned time by at most one group's; a share beyond the
// groups is an error that says why.
func TestShardOf(t *testing.T) {
	cases := shardCases(t)
	o := engine.DefaultOptions()
	o.Forks = 5
	o.Warmup = result.IterSpec{Count: 2, Time: time.Second}
	o.Measure = result.IterSpec{Count: 3, Time: time.Second}
	all := names(cases)
	for n := 1; n <= 12; n++ {
		var seen []string
		var loads []float64
		for i := 1; i <= n; i++ {
			sh := engine.Shard{Index: i, Count: n}
			got, err := sh.Of(cases, o)
			if err != nil {
				t.Fatalf("%s: %v", sh, err)
			}
			again, _ := sh.Of(cases, o)
			if !slices.Equal(names(got), names(again)) {
				t.Errorf("%s: dealt twice, %q then %q", sh, names(got), names(again))
			}
			if !inOrder(names(got), all) {
				t.Errorf("%s: %q out of the plan's order", sh, names(got))
			}
			for _, c := range got {
				if strings.Contains(c.Name(), "impl=skiplist") && !slices.Contains(names(got), strings.Replace(c.Name(), "skiplist", "paged", 1)) {
					t.Errorf("%s: %s without its paged side", sh, c.Name())
				}
			}
			seen = append(seen, names(got)...)
			loads = append(loads, planned(got))
		}
		slices.Sort(seen)
		if want := slices.Sorted(slices.Values(all)); !slices.Equal(seen, want) {
			t.Errorf("%d shares: together %q, want every case once %q", n, seen, want)
		}
		// The longest group, an implementation pair, plans 53 s: LPT
		// deals the shares within it of each other.
		if spread := slices.Max(loads) - slices.Min(loads); spread > 53 {
			t.Errorf("%d shares: planned %v s, spread beyond a group", n, loads)
		}
	}
	_, err := engine.Shard{Index: 13, Count: 13}.Of(cases, o)
	if err == nil || !strings.Contains(err.Error(), "share 13/13 holds no case: the 18 selected cases form 12 comparison group(s), fewer than 13 shares") {
		t.Errorf("13 shares of 12 groups: %v", err)
	}
}

// planned is the seconds a share plans at 5 forks (DefaultOptions'),
// each fork 0.3 s to start and its iterations: 2 + 3 s of an averaged
// case, 3 unplanned single shots counted as a second each (no warmup).
func planned(cases []engine.Case) float64 {
	var s float64
	for _, c := range cases {
		if c.Bench.Mode == result.SingleShot {
			s += 5 * (0.3 + 3)
		} else {
			s += 5 * (0.3 + 5)
		}
	}
	return s
}

// inOrder reports whether sub keeps the order of all.
func inOrder(sub, all []string) bool {
	i := 0
	for _, s := range sub {
		for i < len(all) && all[i] != s {
			i++
		}
		if i == len(all) {
			return false
		}
	}
	return true
}

// TestParseShard: I/N with 1 ≤ I ≤ N, and nothing else.
func TestParseShard(t *testing.T) {
	if sh, err := engine.ParseShard("2/4"); err != nil || sh != (engine.Shard{Index: 2, Count: 4}) {
		t.Errorf("2/4: %+v, %v", sh, err)
	}
	for _, bad := range []string{"", "2", "0/4", "5/4", "-1/4", "1/0", "a/4", "1/b", "1/4/2", "1.5/4"} {
		if sh, err := engine.ParseShard(bad); err == nil || !strings.Contains(err.Error(), "I/N") && !strings.Contains(err.Error(), "1 ≤ I ≤ N") {
			t.Errorf("%q: %+v, %v; want an error naming I/N", bad, sh, err)
		}
	}
}
