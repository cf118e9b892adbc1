package dedup

import (
	"math"
	"testing"
)

// TestExtremeSequences: every int64 is a sequence, the lowest two
// included (Atomic once used them as markers, so Set(p, MinInt64) read as
// absent and Admit(p, MinInt64) was accepted twice).
func TestExtremeSequences(t *testing.T) {
	forEach(t, func(t *testing.T, newA func() Admission) {
		for _, seq := range []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, math.MaxInt64} {
			a := newA()
			if ok, _ := a.Admit("p", seq, seq); !ok {
				t.Fatalf("first Admit(%d) refused", seq)
			}
			if ok, last := a.Admit("p", seq, seq); ok || last != seq {
				t.Errorf("second Admit(%d) = %v, %d; want a duplicate of %d", seq, ok, last, seq)
			}
			if v, ok := a.Pushed("p"); !ok || v != seq {
				t.Errorf("Pushed after Admit(%d) = %d, %v", seq, v, ok)
			}
			b := newA()
			b.Set("q", seq)
			if v, ok := b.Pushed("q"); !ok || v != seq || b.Len() != 1 {
				t.Errorf("Set(q, %d): Pushed = %d, %v; Len %d", seq, v, ok, b.Len())
			}
			if ok, _ := b.Admit("q", seq, seq); ok {
				t.Errorf("Admit(q, %d) after Set(q, %d) accepted", seq, seq)
			}
			b.Delete("q")
			if _, ok := b.Pushed("q"); ok || b.Len() != 0 {
				t.Errorf("after Delete: still present (Len %d)", b.Len())
			}
		}
	})
}

// nilMapStore serves a snapshot whose maps are nil, as a store written by
// hand or decoded from "null" may.
type nilMapStore struct{}

func (nilMapStore) Save(*Snapshot) error { return nil }
func (nilMapStore) Load() (*Snapshot, []error, error) {
	return &Snapshot{Position: Position{1, 0}}, nil, nil
}

// TestRecoverFromASnapshotWithNilMaps: recovery replays entry (1,1) onto a
// snapshot taken at (1,0) whose maps are nil, instead of panicking, in
// every implementation.
func TestRecoverFromASnapshotWithNilMaps(t *testing.T) {
	forEach(t, func(t *testing.T, newA func() Admission) {
		log := &MemLog{}
		log.Append(*msg("x", 1))
		log.Append(*msg("a", 7))
		d := New(newA(), Config{SnapshotInterval: 100, Store: nilMapStore{}})
		rec, err := d.Recover(log)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Replayed != 1 {
			t.Errorf("replayed %d entries after (1,0), want 1", rec.Replayed)
		}
		mustStatus(t, d, msg("a", 7), Dup)
		mustStatus(t, d, msg("a", 8), NotDup)
	})
}
