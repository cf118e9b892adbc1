package bisect

import (
	"math"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// TestAgainPrecision: an unknown step is measured again, to an interval
// that would place it when its estimate lies at least 1/8 of the change
// from the midpoint, and to ±0.7/8 of the change nearer it (a commit at
// a third measured near the half by chance is placed then); a decided one
// is not.
func TestAgainPrecision(t *testing.T) {
	total := math.Log(1.09)
	for _, c := range []struct {
		p    Position
		want bool
	}{
		{Position{Share: 0.36, Lo: 0.21, Hi: 0.51}, true}, // a +3 % commit of +3 % and +6 %
		{Position{Share: 0.64, Lo: 0.45, Hi: 0.83}, true},
		{Position{Share: 0.52, Lo: 0.30, Hi: 0.74}, true}, // near the midpoint: the floor
		{Position{Share: 0.46, Lo: 0.23, Hi: 0.70}, true},
		{Position{Share: 0.35, Lo: 0.34, Hi: 0.36}, false}, // decided: good
		{Position{Share: 0.96, Lo: 0.95, Hi: 0.98}, false}, // decided: bad
	} {
		prec, ok := againPrecision(c.p, total)
		if ok != c.want {
			t.Errorf("%+v: again %v, want %v", c.p, ok, c.want)
			continue
		}
		if !ok {
			continue
		}
		h, d := prec/total, math.Abs(c.p.Share-0.5)
		switch {
		case d >= 1.0/8 && (c.p.Share+h >= 0.5) == (c.p.Share-h <= 0.5):
			t.Errorf("%+v: precision ±%.3f of the change still holds ½", c.p, h)
		case d < 1.0/8 && math.Abs(h-0.7/8) > 1e-12:
			t.Errorf("%+v: precision ±%.4f of the change, want the floor ±%.4f", c.p, h, 0.7/8)
		case 0.36+h >= 0.5:
			// A commit at 0.36 measured to that precision is placed.
			t.Errorf("%+v: precision ±%.3f would not place a commit at 0.36", c.p, h)
		}
	}
}

// TestConfirms: a second A/B confirms the ends' change only when it is
// changed the same way; the contradicting re-measurement of the ends
// (+11.4 % first, −12.4 % again) and an unknown one do not.
func TestConfirms(t *testing.T) {
	total := &compare.Decision{Verdict: verdict.Changed, Worse: true, Change: verdict.Change{Ratio: 1.114}}
	for _, tc := range []struct {
		d    *compare.Decision
		want bool
	}{
		{&compare.Decision{Verdict: verdict.Changed, Worse: true, Change: verdict.Change{Ratio: 1.09}}, true},
		{&compare.Decision{Verdict: verdict.Changed, Worse: false, Change: verdict.Change{Ratio: 0.876}}, false},
		{&compare.Decision{Verdict: verdict.Unknown, Worse: true, Change: verdict.Change{Ratio: 1.02}}, false},
		{&compare.Decision{Verdict: verdict.Same, Change: verdict.Change{Ratio: 1}}, false},
		{&compare.Decision{Verdict: verdict.Changed, Worse: true, Err: verdict.ErrNotPositive}, false},
		{nil, false},
	} {
		if got := confirms(tc.d, total); got != tc.want {
			t.Errorf("confirms(%+v) = %v, want %v", tc.d, got, tc.want)
		}
	}
}

// TestRestNote: a culprit that explains part of the change points at the
// rest; when its parent is the good end, there is no part before it to
// bisect (--good X --bad X would be refused).
func TestRestNote(t *testing.T) {
	good, c1, c2, bad := revision.Commit{Hash: "aaaa"}, revision.Commit{Hash: "bbbb"}, revision.Commit{Hash: "cccc"}, revision.Commit{Hash: "dddd"}
	e := Position{Share: 0.6, Lo: 0.5, Hi: 0.7}
	if n := restNote(e, c1, good, good, bad); strings.Contains(n, "before it") || !strings.Contains(n, "--good bbbb --bad dddd") {
		t.Errorf("culprit right after good: %q", n)
	}
	if n := restNote(e, c2, c1, good, bad); !strings.Contains(n, "the part before it with --good aaaa --bad bbbb") {
		t.Errorf("culprit after another commit: %q", n)
	}
}
