package bisect

import (
	"context"
	"fmt"
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
// the bad end, already known to be bad) with p. The error is p's, with
// the steps made before it in the result.
func Search(ctx context.Context, commits []revision.Commit, p Prober) (*Result, error) {
	if len(commits) == 0 {
		return nil, fmt.Errorf("bisect: an empty range")
	}
	r := &Result{}
	good, bad := -1, len(commits)-1 // the good end is before the range
	tried := map[int]bool{}
	for {
		i, ok := next(good, bad, tried)
		if !ok {
			break
		}
		tried[i] = true
		if n, ok := p.(Narrowing); ok {
			n.Narrowed(bad - good)
		}
		s, err := p.Probe(ctx, i, commits[i])
		if err != nil {
			r.Stopped = err.Error()
			r.Suspects = commits[good+1 : bad+1]
			return r, err
		}
		s.Index, s.Commit = i, commits[i]
		r.Steps = append(r.Steps, s)
		switch s.Verdict {
		case Good:
			good = i
		case Bad:
			bad = i
		}
	}
	if bad == good+1 {
		c := commits[bad]
		r.Culprit = &c
	} else {
		r.Suspects = commits[good+1 : bad+1]
	}
	return r, nil
}

// next is the untried commit strictly between the ends nearest their
// middle (the earlier of two as near), if one is left.
func next(good, bad int, tried map[int]bool) (int, bool) {
	mid := good + (bad-good)/2
	for d := 0; d < bad-good; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i > good && i < bad && !tried[i] {
				return i, true
			}
		}
	}
	return 0, false
}
