package harness

import (
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

func TestScheduleAt(t *testing.T) {
	s := Schedule{StartUnixNano: 1_000, GapNs: 10}
	p := &Plan{Warmup: result.IterSpec{Count: 1, Time: 100}, Measure: result.IterSpec{Count: 3, Time: 50}}
	for j, want := range []int64{1_000, 1_110, 1_170, 1_230} {
		if got := s.At(p, j); got.UnixNano() != want {
			t.Errorf("At(%d) = %d, want %d", j, got.UnixNano(), want)
		}
	}
	if !s.At(p, 4).IsZero() {
		t.Error("an iteration beyond the plan is scheduled")
	}
	// Iterations of a fixed op count: the first starts on the schedule,
	// the ones after it when the one before ends.
	ops := &Plan{Warmup: result.IterSpec{Count: 1, Ops: 5}, Measure: result.IterSpec{Count: 2, Time: time.Second}}
	if s.At(ops, 0).UnixNano() != 1_000 || !s.At(ops, 1).IsZero() || !s.At(ops, 2).IsZero() {
		t.Errorf("op-count schedule: %v %v %v", s.At(ops, 0), s.At(ops, 1), s.At(ops, 2))
	}
}
