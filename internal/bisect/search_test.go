package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/revision"
)

func history(n int) []revision.Commit {
	cs := make([]revision.Commit, n)
	for i := range cs {
		cs[i] = revision.Commit{Hash: fmt.Sprintf("c%02d", i), Subject: fmt.Sprintf("commit %d", i)}
	}
	return cs
}

// fake places commit i at share(i) with a ±width interval, skips the
// commits of skip, and answers unknown for those of unknown.
type fake struct {
	mu      sync.Mutex // SearchParallel probes from goroutines
	share   func(i int) float64
	width   float64
	skip    map[int]bool
	unknown map[int]bool
	probed  []int
	failAt  int // the probe (1-based) that fails; 0 never
}

func (f *fake) Probe(_ context.Context, i int, c revision.Commit) (Step, error) {
	f.mu.Lock()
	f.probed = append(f.probed, i)
	n := len(f.probed)
	f.mu.Unlock()
	if n == f.failAt {
		return Step{}, errors.New("interrupted")
	}
	if f.skip[i] {
		return Step{Verdict: Skipped, Reason: "does not build"}, nil
	}
	s := f.share(i)
	if f.unknown[i] {
		p := Position{s, s - 1, s + 1}
		return Step{Verdict: Classify(p), Position: &p, Reason: "budget spent"}, nil
	}
	p := Position{s, s - f.width, s + f.width}
	return Step{Verdict: Classify(p), Position: &p}, nil
}

func step(k int) func(int) float64 {
	return func(i int) float64 {
		if i >= k {
			return 1
		}
		return 0
	}
}

func TestSearchFindsEveryCulpritInLogSteps(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 32, 33, 64} {
		limit := int(math.Ceil(math.Log2(float64(n))))
		for k := range n {
			f := &fake{share: step(k), width: 0.1}
			r, err := Search(t.Context(), history(n), f)
			if err != nil {
				t.Fatal(err)
			}
			if r.Culprit == nil || r.Culprit.Hash != fmt.Sprintf("c%02d", k) || r.Suspects != nil {
				t.Fatalf("n=%d culprit %d: got %+v suspects %v", n, k, r.Culprit, r.Suspects)
			}
			if len(r.Steps) > limit {
				t.Errorf("n=%d culprit %d: %d steps, more than ⌈log₂ n⌉ = %d (%v)", n, k, len(r.Steps), limit, f.probed)
			}
			if slices.Contains(f.probed, n-1) {
				t.Errorf("n=%d: probed the bad end, which is known", n)
			}
			for _, s := range r.Steps {
				if want := map[bool]Verdict{true: Bad, false: Good}[s.Index >= k]; s.Verdict != want {
					t.Errorf("n=%d culprit %d: step %d is %s, want %s", n, k, s.Index, s.Verdict, want)
				}
			}
		}
	}
}

// narrowing is a fake that records what Search tells it before each
// probe (Narrowing).
type narrowing struct {
	fake
	suspects []int
}

func (f *narrowing) Narrowed(n int) { f.suspects = append(f.suspects, n) }

// TestSearchSaysHowManyCommitsAreLeft: before each probe a Narrowing
// prober is told the commits that may hold the change, the whole range
// first, fewer at every decided step; with clean verdicts the steps that
// follow (this one included) never outnumber ⌈log₂⌉ of it, the estimate
// of the progress line.
func TestSearchSaysHowManyCommitsAreLeft(t *testing.T) {
	for _, n := range []int{2, 3, 7, 32, 33} {
		for k := range n {
			f := &narrowing{fake: fake{share: step(k), width: 0.1}}
			r, err := Search(t.Context(), history(n), f)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.suspects) != len(r.Steps) || f.suspects[0] != n {
				t.Fatalf("n=%d culprit %d: told %v for %d steps, want one a step and %d first", n, k, f.suspects, len(r.Steps), n)
			}
			for j, m := range f.suspects {
				if j > 0 && m >= f.suspects[j-1] {
					t.Errorf("n=%d culprit %d: suspects %v do not shrink", n, k, f.suspects)
				}
				if left := len(r.Steps) - j; float64(left) > math.Ceil(math.Log2(float64(m))) {
					t.Errorf("n=%d culprit %d: %d steps followed %d suspects, more than ⌈log₂⌉", n, k, left, m)
				}
			}
		}
	}
}

func TestSearchSkipsUnbuildableCommitsAndNamesThem(t *testing.T) {
	// The culprit's neighbours do not build: the commit after a skipped
	// one is still found when the skipped one lies elsewhere.
	f := &fake{share: step(20), width: 0.1, skip: map[int]bool{31: true, 14: true}}
	r, err := Search(t.Context(), history(64), f)
	if err != nil || r.Culprit == nil || r.Culprit.Hash != "c20" {
		t.Fatalf("got %+v %v", r, err)
	}
	skipped := 0
	for _, s := range r.Steps {
		if s.Verdict == Skipped {
			skipped++
		}
	}
	if skipped != 2 || len(r.Steps) > 6+2 {
		t.Errorf("%d skipped of %d steps: %v", skipped, len(r.Steps), f.probed)
	}
	// The commit just before the culprit does not build: the change is in
	// it or in the culprit, and neither is claimed.
	f = &fake{share: step(20), width: 0.1, skip: map[int]bool{19: true}}
	r, _ = Search(t.Context(), history(64), f)
	if r.Culprit != nil || len(r.Suspects) != 2 || r.Suspects[0].Hash != "c19" || r.Suspects[1].Hash != "c20" {
		t.Errorf("skipped parent: culprit %+v suspects %v, want c19 c20", r.Culprit, r.Suspects)
	}
	// Every commit but the bad end is unbuildable: the whole range is
	// suspect.
	all := map[int]bool{}
	for i := range 7 {
		all[i] = true
	}
	f = &fake{share: step(3), skip: all}
	if r, _ = Search(t.Context(), history(8), f); r.Culprit != nil || len(r.Suspects) != 8 || len(r.Steps) != 7 {
		t.Errorf("nothing builds: culprit %+v, %d suspects, %d steps", r.Culprit, len(r.Suspects), len(r.Steps))
	}
}

func TestSearchNeverGuessesAnUnknownCommit(t *testing.T) {
	// The culprit itself stays unknown: its parent is good, the next is
	// bad, and both it and the next are named, not one guessed.
	f := &fake{share: step(40), width: 0.1, unknown: map[int]bool{40: true}}
	r, err := Search(t.Context(), history(64), f)
	if err != nil || r.Culprit != nil || len(r.Suspects) != 2 || r.Suspects[0].Hash != "c40" || r.Suspects[1].Hash != "c41" {
		t.Fatalf("unknown culprit: %+v suspects %v", r.Culprit, r.Suspects)
	}
	// An unknown commit away from the culprit costs one step, not the
	// answer.
	f = &fake{share: step(40), width: 0.1, unknown: map[int]bool{31: true, 47: true}}
	if r, _ = Search(t.Context(), history(64), f); r.Culprit == nil || r.Culprit.Hash != "c40" || len(r.Steps) > 8 {
		t.Errorf("unknowns elsewhere: %+v in %d steps (%v)", r.Culprit, len(r.Steps), f.probed)
	}
}

func TestSearchOfTwoChangesFindsTheOneThatCrossesHalf(t *testing.T) {
	// 30 % of the change at commit 10, the rest at 50: the search finds
	// 50, where the share crosses ½; the caller tells the other part by
	// the culprit's own change.
	share := func(i int) float64 {
		switch {
		case i >= 50:
			return 1
		case i >= 10:
			return 0.3
		}
		return 0
	}
	r, err := Search(t.Context(), history(64), &fake{share: share, width: 0.1})
	if err != nil || r.Culprit == nil || r.Culprit.Hash != "c50" {
		t.Fatalf("got %+v %v", r.Culprit, err)
	}
	// 70 % at 10: that one.
	share2 := func(i int) float64 {
		switch {
		case i >= 50:
			return 1
		case i >= 10:
			return 0.7
		}
		return 0
	}
	if r, _ = Search(t.Context(), history(64), &fake{share: share2, width: 0.1}); r.Culprit == nil || r.Culprit.Hash != "c10" {
		t.Errorf("got %+v", r.Culprit)
	}
}

func TestSearchKeepsItsStepsWhenInterrupted(t *testing.T) {
	f := &fake{share: step(5), width: 0.1, failAt: 3}
	r, err := Search(t.Context(), history(64), f)
	if err == nil || r == nil || len(r.Steps) != 2 || r.Stopped != "interrupted" || r.Culprit != nil || len(r.Suspects) == 0 {
		t.Fatalf("got %+v %v", r, err)
	}
	if _, err := Search(t.Context(), nil, f); err == nil {
		t.Error("an empty range was searched")
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		p    Position
		want Verdict
	}{
		{Position{1, 0.9, 1.1}, Bad},
		{Position{0, -0.1, 0.1}, Good},
		{Position{0.5, 0.2, 0.8}, Unknown},
		{Position{0.6, 0.5, 0.7}, Unknown}, // touching ½ decides nothing
		{Position{0.6, 0.51, 0.7}, Bad},
		{Position{0.4, 0.3, 0.49}, Good},
	} {
		if got := Classify(c.p); got != c.want {
			t.Errorf("Classify(%+v) = %s, want %s", c.p, got, c.want)
		}
	}
}

// TestSearchParallelFindsEveryCulpritInFewerSteps: with k probes at once
// the culprit is found, wherever it is, in at most ⌈log_{k+1} n⌉ batches
// of at most k probes each, never probing the bad end; one at a time
// (k = 1) it is Search, probe for probe.
func TestSearchParallelFindsEveryCulpritInFewerSteps(t *testing.T) {
	for _, k := range []int{1, 2, 3, 7} {
		for _, n := range []int{1, 2, 5, 16, 64, 100} {
			limit := int(math.Ceil(math.Log(float64(n))/math.Log(float64(k+1)) - 1e-9))
			for c := range n {
				f := &fake{share: step(c), width: 0.1}
				r, err := SearchParallel(t.Context(), history(n), f, k)
				if err != nil {
					t.Fatal(err)
				}
				if r.Culprit == nil || r.Culprit.Hash != fmt.Sprintf("c%02d", c) {
					t.Fatalf("k=%d n=%d culprit %d: got %+v suspects %v", k, n, c, r.Culprit, r.Suspects)
				}
				batches := map[int]int{}
				for _, s := range r.Steps {
					batches[s.Batch]++
				}
				if len(batches) > limit {
					t.Errorf("k=%d n=%d culprit %d: %d batches, more than ⌈log_%d n⌉ = %d", k, n, c, len(batches), k+1, limit)
				}
				for b, m := range batches {
					if m > k {
						t.Errorf("k=%d n=%d: batch %d probed %d commits", k, n, b, m)
					}
				}
				if slices.Contains(f.probed, n-1) {
					t.Errorf("k=%d n=%d: probed the bad end", k, n)
				}
				if k == 1 {
					one := &fake{share: step(c), width: 0.1}
					Search(t.Context(), history(n), one)
					if !slices.Equal(one.probed, f.probed) {
						t.Errorf("n=%d culprit %d: k=1 probed %v, Search %v", n, c, f.probed, one.probed)
					}
				}
			}
		}
	}
}

// TestSearchParallelFollowsTheFirstBad: a Good probe after a Bad one in
// the same batch (a change undone, or noise) moves no end; unknown and
// skipped commits are never guessed, and a 64-commit range with 3
// probes at once ends in 3 batches.
func TestSearchParallelFollowsTheFirstBad(t *testing.T) {
	// Commits 20-29 carry the change, 30-49 lose it, 50 on have it again.
	share := func(i int) float64 {
		if i >= 20 && i < 30 || i >= 50 {
			return 1
		}
		return 0
	}
	f := &fake{share: share, width: 0.1}
	r, err := SearchParallel(t.Context(), history(64), f, 3)
	if err != nil {
		t.Fatal(err)
	}
	// The first batch probes 15, 31 and 47: all good, so the search moves
	// past the first change to the second; it never claims a commit it
	// did not see bad after a good parent.
	if r.Culprit == nil || r.Culprit.Hash != "c50" {
		t.Errorf("culprit %+v, probed %v; want c50 (the first batch saw 15, 31 and 47 good)", r.Culprit, f.probed)
	}
	g := &fake{share: step(40), width: 0.1, unknown: map[int]bool{39: true}, skip: map[int]bool{40: true}}
	r, err = SearchParallel(t.Context(), history(64), g, 3)
	if err != nil {
		t.Fatal(err)
	}
	if r.Culprit != nil || len(r.Suspects) != 3 || r.Suspects[0].Hash != "c39" {
		t.Errorf("with 39 unknown and 40 skipped: culprit %+v suspects %v, want c39, c40 and c41 (the first seen bad) as suspects", r.Culprit, r.Suspects)
	}
	if _, err := SearchParallel(t.Context(), history(4), g, 0); err == nil {
		t.Error("0 probes at once accepted")
	}
}

// gate is a prober whose probes wait until k of them run at once.
type gate struct {
	fake
	k       int
	arrived chan struct{}
}

func (g *gate) Probe(ctx context.Context, i int, c revision.Commit) (Step, error) {
	g.arrived <- struct{}{}
	deadline := time.After(10 * time.Second)
	for len(g.arrived) < g.k {
		select {
		case <-deadline:
			return Step{}, fmt.Errorf("probe of %d alone after 10 s", i)
		case <-time.After(time.Millisecond):
		}
	}
	return g.fake.Probe(ctx, i, c)
}

// TestSearchParallelProbesAtOnce: the first batch's k probes run at the
// same time (each waits for the others).
func TestSearchParallelProbesAtOnce(t *testing.T) {
	g := &gate{fake: fake{share: step(30), width: 0.1}, k: 3, arrived: make(chan struct{}, 64)}
	r, err := SearchParallel(t.Context(), history(64), g, 3)
	if err != nil {
		t.Fatal(err)
	}
	if r.Culprit == nil || r.Culprit.Hash != "c30" {
		t.Errorf("culprit %+v", r.Culprit)
	}
}

// batching is a fake told each step's commits before they are probed.
type batching struct {
	fake
	batches [][]int
}

func (b *batching) Batch(_ context.Context, cs []revision.Commit) {
	var idx []int
	for _, c := range cs {
		var i int
		fmt.Sscanf(c.Hash, "c%d", &i)
		idx = append(idx, i)
	}
	b.batches = append(b.batches, idx)
}

// TestSearchParallelTellsEachBatch: a Batching prober hears each step's
// commits, all of them, before any is probed.
func TestSearchParallelTellsEachBatch(t *testing.T) {
	b := &batching{fake: fake{share: step(30), width: 0.1}}
	r, err := SearchParallel(t.Context(), history(64), b, 3)
	if err != nil {
		t.Fatal(err)
	}
	by := map[int][]int{}
	for _, s := range r.Steps {
		by[s.Batch-1] = append(by[s.Batch-1], s.Index)
	}
	if len(b.batches) != len(by) {
		t.Fatalf("told %d batches, probed %d", len(b.batches), len(by))
	}
	for i, told := range b.batches {
		if !slices.Equal(told, by[i]) {
			t.Errorf("batch %d: told %v, probed %v", i+1, told, by[i])
		}
	}
}
