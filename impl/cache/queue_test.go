package cache

import "testing"

// TestRemovalQueueRing: the ring keeps insertion order through growth,
// wrap-around and shrinking, next returns the new head, and Len is what
// was added less what was dropped, against a slice kept beside it.
func TestRemovalQueueRing(t *testing.T) {
	q := NewRemovalQueue(0, false)
	var want []*wrapper
	check := func(step string) {
		t.Helper()
		if q.Len() != len(want) {
			t.Fatalf("%s: Len %d, want %d", step, q.Len(), len(want))
		}
		if w := q.peek(); (len(want) == 0 && w != nil) || (len(want) > 0 && w != want[0]) {
			t.Fatalf("%s: head %p, want the oldest of %d", step, w, len(want))
		}
	}
	add := func(k int) {
		for range k {
			w := &wrapper{}
			q.add(w)
			want = append(want, w)
		}
	}
	poll := func(k int) {
		for range k {
			head := q.next(false)
			want = want[1:]
			if (len(want) == 0 && head != nil) || (len(want) > 0 && head != want[0]) {
				t.Fatalf("next returned %p, not the new head of %d", head, len(want))
			}
		}
	}
	check("empty")
	// Phases that wrap the head around, grow a wrapped ring, shrink it to
	// the least size and grow it again.
	for i, phase := range [][2]int{{40, 30}, {50, 0}, {500, 100}, {3, 460}, {1000, 900}, {0, 103}, {70, 10}} {
		add(phase[0])
		check("add")
		for range phase[1] {
			poll(1)
			check("poll")
		}
		if l := len(q.ring); l&(l-1) != 0 || l < q.n || (l > minRing && q.n < l/4) {
			t.Fatalf("phase %d: ring of %d slots for %d wrappers", i, l, q.n)
		}
		for s := range q.ring { // polled slots are cleared: nothing kept alive
			if off := (s - q.head) & (len(q.ring) - 1); off >= q.n && q.ring[s] != nil {
				t.Fatalf("phase %d: slot %d outside the queue still holds a wrapper", i, s)
			}
		}
	}
	for len(want) > 0 {
		poll(1)
		check("drain")
	}
}
