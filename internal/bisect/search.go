package bisect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// Verdict is what one step found of its commit.
type Verdict int

const (
	// Unknown: the measurement could not place the commit on either side
	// of the midpoint within its budget.
	Unknown Verdict = iota
	// Good: the commit does not have the change; it comes later.
	Good
	// Bad: the commit has the change; it is this commit or an earlier one.
	Bad
	// Skipped: the commit could not be measured (it does not build).
	Skipped
)

func (v Verdict) String() string {
	switch v {
	case Good:
		return "good"
	case Bad:
		return "bad"
	case Skipped:
		return "skipped"
	}
	return "unknown"
}

// MarshalText writes the verdict's name.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads a verdict's name.
func (v *Verdict) UnmarshalText(b []byte) error {
	for _, w := range []Verdict{Unknown, Good, Bad, Skipped} {
		if w.String() == string(b) {
			*v = w
			return nil
		}
	}
	return fmt.Errorf("bisect: unknown verdict %q", b)
}

// Position is where a commit stands between the ends: the share of the
// good→bad change it carries, with its interval.
type Position struct {
	Share, Lo, Hi float64
}

// Classify is the verdict of a position: Bad when its whole interval
// lies above ½, Good when it lies below, Unknown otherwise.
func Classify(p Position) Verdict {
	switch {
	case p.Lo > 0.5:
		return Bad
	case p.Hi < 0.5:
		return Good
	}
	return Unknown
}

// Step is one probe of a commit.
type Step struct {
	Commit   revision.Commit `json:"commit"`
	Index    int             `json:"index"` // in the range, 0 the first commit after the good end
	Verdict  Verdict         `json:"verdict"`
	Position *Position       `json:"position,omitempty"` // nil for a skipped commit
	// Reason says why a commit was skipped or stayed unknown.
	Reason string        `json:"reason,omitempty"`
	Rounds int           `json:"rounds"`
	Took   time.Duration `json:"tookNs"`
	// Dir holds the step's raw A/B files.
	Dir string `json:"dir,omitempty"`
	// Batch is the step of the search the probe was made in: probes of
	// one batch ran at once (see SearchParallel).
	Batch int `json:"batch,omitempty"`
}

// Prober measures commit i of the range (0 the first after the good end)
// and returns its step; an error stops the search.
type Prober interface {
	Probe(ctx context.Context, i int, c revision.Commit) (Step, error)
}

// Narrowing is a Prober that is told, before each probe, how many
// commits may still hold the change: those after the last good one up to
// the first bad one. A search has about log2 of them steps left.
type Narrowing interface {
	Narrowed(suspects int)
}

// Batching is a Prober told, before each step of SearchParallel, the
// commits it is about to probe at once, to prepare them together.
type Batching interface {
	Batch(ctx context.Context, commits []revision.Commit)
}

// Result is what a search found.
type Result struct {
	// Culprit is the first bad commit, when the search decided it: the
	// commit before it is good (or is the good end).
	Culprit *revision.Commit `json:"culprit,omitempty"`
	// Suspects are, when no culprit was decided, the commits that may
	// hold the change, oldest first: the range's commits after the last
	// good one up to the first bad one.
	Suspects []revision.Commit `json:"suspects,omitempty"`
	Steps    []Step            `json:"steps"`
	// Stopped is the error that ended the search early ("" when it ran
	// to its end).
	Stopped string `json:"stopped,omitempty"`
}

// Search bisects commits (the range, oldest first; its last commit is
// the bad end, already known to be bad) with p, one commit at a time. The
// error is p's, with the steps made before it in the result.
func Search(ctx context.Context, commits []revision.Commit, p Prober) (*Result, error) {
	return SearchParallel(ctx, commits, p, 1)
}

// SearchParallel bisects commits with up to k probes at once, p called
// from k goroutines (it must be safe for that): each step probes the k
// untried commits that cut the commits in doubt into k+1 near-equal
// parts, then moves the bad end to the first Bad probe and the good end
// to the last Good probe before it. When every probe decides, a range of
// N commits takes ⌈log_{k+1} N⌉ steps instead of ⌈log₂ N⌉. A Good probe
// after a Bad one (noise, or a change undone) moves no end: the search
// follows the first Bad. With k = 1 it is Search. Steps of one batch
// carry its number (Step.Batch, from 1), in the order of their commits.
func SearchParallel(ctx context.Context, commits []revision.Commit, p Prober, k int) (*Result, error) {
	if len(commits) == 0 {
		return nil, fmt.Errorf("bisect: an empty range")
	}
	if k < 1 {
		return nil, fmt.Errorf("bisect: %d probes at once", k)
	}
	r := &Result{}
	good, bad := -1, len(commits)-1 // the good end is before the range
	tried := map[int]bool{}
	for batch := 1; ; batch++ {
		picks := pick(good, bad, k, tried)
		if len(picks) == 0 {
			break
		}
		if n, ok := p.(Narrowing); ok {
			n.Narrowed(bad - good)
		}
		if b, ok := p.(Batching); ok {
			var cs []revision.Commit
			for _, i := range picks {
				cs = append(cs, commits[i])
			}
			b.Batch(ctx, cs)
		}
		steps, err := probeAll(ctx, p, commits, picks)
		for _, s := range steps {
			if s != nil {
				s.Batch = batch
				r.Steps = append(r.Steps, *s)
			}
		}
		if err != nil {
			r.Stopped = err.Error()
			r.Suspects = commits[good+1 : bad+1]
			return r, err
		}
		good, bad = moveEnds(good, bad, steps)
	}
	if bad == good+1 {
		c := commits[bad]
		r.Culprit = &c
	} else {
		r.Suspects = commits[good+1 : bad+1]
	}
	return r, nil
}

// pick is up to k untried commits strictly between the ends, each the
// one nearest its cut of the ends into k+1 parts, in index order; it
// marks them tried.
func pick(good, bad, k int, tried map[int]bool) []int {
	var out []int
	for j := 1; j <= k; j++ {
		i, ok := nearest(good, bad, good+(bad-good)*j/(k+1), tried)
		if !ok {
			break
		}
		tried[i] = true
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// probeAll probes the picked commits at once; the steps are in the
// picks' order, nil for a probe that failed, with the first failure's
// error.
func probeAll(ctx context.Context, p Prober, commits []revision.Commit, picks []int) ([]*Step, error) {
	steps := make([]*Step, len(picks))
	errs := make([]error, len(picks))
	var wg sync.WaitGroup
	for n, i := range picks {
		wg.Go(func() {
			s, err := p.Probe(ctx, i, commits[i])
			if err != nil {
				errs[n] = err
				return
			}
			s.Index, s.Commit = i, commits[i]
			steps[n] = &s
		})
	}
	wg.Wait()
	return steps, errors.Join(errs...)
}

// moveEnds moves the bad end to the first Bad step and the good end to
// the last Good step before it.
func moveEnds(good, bad int, steps []*Step) (int, int) {
	for _, s := range steps {
		if s.Verdict == Bad && s.Index < bad {
			bad = s.Index
		}
	}
	for _, s := range steps {
		if s.Verdict == Good && s.Index > good && s.Index < bad {
			good = s.Index
		}
	}
	return good, bad
}

// nearest is the untried commit strictly between the ends nearest mid
// (the earlier of two as near), if one is left.
func nearest(good, bad, mid int, tried map[int]bool) (int, bool) {
	for d := 0; d <= bad-good; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i > good && i < bad && !tried[i] {
				return i, true
			}
		}
	}
	return 0, false
}
