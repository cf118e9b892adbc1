package dedup

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// forEach runs a subtest per Admission implementation.
func forEach(t *testing.T, f func(t *testing.T, newA func() Admission)) {
	for _, name := range Implementations {
		t.Run(name, func(t *testing.T) { f(t, func() Admission { return NewAdmission(name) }) })
	}
}

func msg(name string, seq int64) *Message {
	return &Message{ProducerName: name, SequenceID: seq, ChunkID: -1}
}

func mustStatus(t *testing.T, d *Deduplicator, m *Message, want Status) {
	t.Helper()
	got, err := d.IsDuplicate(m)
	if err != nil || got != want {
		t.Fatalf("IsDuplicate(%s seq %d hi %d chunk %d/%d) = %v, %v; want %v", m.ProducerName, m.SequenceID, m.HighestSequenceID, m.ChunkID, m.NumChunks, got, err, want)
	}
}

func TestAdmission(t *testing.T) {
	forEach(t, func(t *testing.T, newA func() Admission) {
		a := newA()
		if ok, _ := a.Admit("p", 5, 5); !ok {
			t.Fatal("first sequence of a new producer refused")
		}
		if ok, last := a.Admit("p", 5, 5); ok || last != 5 {
			t.Fatalf("same sequence again: accepted=%v last=%d", ok, last)
		}
		if ok, _ := a.Admit("p", 6, 9); !ok {
			t.Fatal("higher sequence refused")
		}
		if p, ok := a.Pushed("p"); !ok || p != 9 {
			t.Fatalf("pushed = %d, %v; want the batch's highest 9", p, ok)
		}
		if ok, last := a.Admit("p", 8, 8); ok || last != 9 {
			t.Fatalf("sequence inside the last batch: accepted=%v last=%d", ok, last)
		}
		if ok, _ := a.Admit("q", 0, 0); !ok || a.Len() != 2 {
			t.Fatalf("sequence 0 of another producer: accepted=%v len=%d", ok, a.Len())
		}
		a.Delete("p")
		if _, ok := a.Pushed("p"); ok || a.Len() != 1 {
			t.Fatal("Delete left the producer")
		}
		if ok, _ := a.Admit("p", 1, 1); !ok {
			t.Fatal("a deleted producer starts afresh")
		}
		a.Set("p", 100)
		if p, _ := a.Pushed("p"); p != 100 {
			t.Fatalf("Set: pushed %d", p)
		}
		seen := map[string]int64{}
		a.Range(func(k string, v int64) bool { seen[k] = v; return true })
		if fmt.Sprint(seen) != "map[p:100 q:0]" {
			t.Fatalf("Range = %v", seen)
		}
	})
}

// TestSameProducerRace: 32 goroutines publish the same sequence IDs of one
// producer; exactly one caller gets NotDup per sequence ID, and the pushed
// sequence, read concurrently, never moves backwards.
func TestSameProducerRace(t *testing.T) {
	const goroutines, seqs = 32, 300
	forEach(t, func(t *testing.T, newA func() Admission) {
		d := New(newA(), Config{})
		var notDup [seqs + 1]atomic.Int32
		var start, stop sync.WaitGroup
		start.Add(1)
		var done atomic.Bool
		var backwards atomic.Int64
		stop.Add(1)
		go func() { // observer
			defer stop.Done()
			last := int64(-1)
			for !done.Load() {
				if p, ok := d.Admission().Pushed("shared"); ok {
					if p < last {
						backwards.Add(1)
					}
					last = p
				}
			}
		}()
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start.Wait()
				for s := int64(1); s <= seqs; s++ {
					st, err := d.IsDuplicate(msg("shared", s))
					if err != nil {
						t.Error(err)
						return
					}
					if st == NotDup {
						notDup[s].Add(1)
					}
				}
			}()
		}
		start.Done()
		wg.Wait()
		done.Store(true)
		stop.Wait()
		for s := 1; s <= seqs; s++ {
			if n := notDup[s].Load(); n != 1 {
				t.Fatalf("sequence %d admitted %d times, want exactly once", s, n)
			}
		}
		if n := backwards.Load(); n != 0 {
			t.Fatalf("pushed moved backwards %d times", n)
		}
		if p, _ := d.Admission().Pushed("shared"); p != seqs {
			t.Fatalf("final pushed %d, want %d", p, seqs)
		}
	})
}

func TestDistinctProducersDoNotInterfere(t *testing.T) {
	const goroutines, seqs = 16, 2000
	forEach(t, func(t *testing.T, newA func() Admission) {
		d := New(newA(), Config{})
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("producer-%d", g)
				for s := int64(1); s <= seqs; s++ {
					if st, err := d.IsDuplicate(msg(name, s)); st != NotDup || err != nil {
						t.Errorf("%s seq %d: %v %v", name, s, st, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		for g := 0; g < goroutines; g++ {
			if p, _ := d.Admission().Pushed(fmt.Sprintf("producer-%d", g)); p != seqs {
				t.Errorf("producer-%d pushed %d, want %d", g, p, seqs)
			}
		}
	})
}

func TestDupUnknownAndPersisted(t *testing.T) {
	forEach(t, func(t *testing.T, newA func() Admission) {
		d := New(newA(), Config{})
		mustStatus(t, d, msg("p", 1), NotDup)
		mustStatus(t, d, msg("p", 1), Unknown) // pushed, not yet persisted
		if err := d.RecordPersisted(msg("p", 1), Position{1, 0}); err != nil {
			t.Fatal(err)
		}
		mustStatus(t, d, msg("p", 1), Dup)
		// A batch stores its highest sequence.
		batch := &Message{ProducerName: "p", SequenceID: 2, HighestSequenceID: 5, ChunkID: -1}
		mustStatus(t, d, batch, NotDup)
		mustStatus(t, d, msg("p", 4), Unknown)
		d.RecordPersisted(batch, Position{1, 1})
		mustStatus(t, d, msg("p", 4), Dup)
		mustStatus(t, d, msg("p", 6), NotDup)
		// Markers are never duplicates.
		mustStatus(t, d, &Message{ProducerName: "p", SequenceID: 1, Marker: true, ChunkID: -1}, NotDup)
	})
}

func TestChunks(t *testing.T) {
	forEach(t, func(t *testing.T, newA func() Admission) {
		d := New(newA(), Config{})
		chunk := func(id int) *Message {
			return &Message{ProducerName: "c", SequenceID: 7, ChunkID: id, NumChunks: 3}
		}
		mustStatus(t, d, chunk(0), NotDup)
		mustStatus(t, d, chunk(1), NotDup)
		if _, ok := d.Admission().Pushed("c"); ok {
			t.Fatal("a non-last chunk was admitted into the pushed map")
		}
		mustStatus(t, d, chunk(2), NotDup)
		d.RecordPersisted(chunk(0), Position{1, 0})
		if _, ok := d.Persisted("c"); ok {
			t.Fatal("a non-last chunk was recorded as persisted")
		}
		d.RecordPersisted(chunk(2), Position{1, 2})
		mustStatus(t, d, chunk(2), Dup)
		mustStatus(t, d, chunk(0), NotDup) // only the last chunk is checked
	})
}

func TestReplication(t *testing.T) {
	forEach(t, func(t *testing.T, newA func() Admission) {
		d := New(newA(), Config{})
		v1 := func(seq int64) *Message {
			return &Message{ProducerName: "pulsar.repl.east", SequenceID: 999, ChunkID: -1, OriginalProducerName: "orig", OriginalSequenceID: seq}
		}
		mustStatus(t, d, v1(3), NotDup)
		if p, _ := d.Admission().Pushed("orig"); p != 3 {
			t.Fatalf("v1 replication keyed by %d under orig, want 3", p)
		}
		mustStatus(t, d, v1(3), Unknown)
		d.RecordPersisted(v1(3), Position{1, 0})
		mustStatus(t, d, v1(3), Dup)
		mustStatus(t, d, msg("orig", 3), Dup) // the original producer's own view agrees

		v2 := func(l, e int64) *Message {
			return &Message{ProducerName: "pulsar.repl.west", ChunkID: -1, ReplByPosition: true, ReplPosition: Position{l, e}}
		}
		mustStatus(t, d, v2(5, 10), NotDup)
		mustStatus(t, d, v2(5, 9), Unknown)
		mustStatus(t, d, v2(6, 0), NotDup)
		d.RecordPersisted(v2(5, 10), Position{1, 1})
		mustStatus(t, d, v2(5, 9), Dup)
		mustStatus(t, d, v2(6, 0), Unknown)
	})
}

func TestBadInput(t *testing.T) {
	forEach(t, func(t *testing.T, newA func() Admission) {
		d := New(newA(), Config{})
		for _, m := range []*Message{
			{ProducerName: "", SequenceID: 1, ChunkID: -1},
			{ProducerName: "p", SequenceID: -1, ChunkID: -1},
			{ProducerName: "p", SequenceID: 1, ChunkID: 3, NumChunks: 3},
			{ProducerName: "p", SequenceID: 1, ChunkID: -2, NumChunks: 3},
			{ProducerName: "p", SequenceID: 1, ChunkID: 0, NumChunks: 0},
			{ProducerName: "pulsar.repl.x", ChunkID: -1},
			{ProducerName: "pulsar.repl.x", ChunkID: -1, ReplByPosition: true, ReplPosition: Position{-1, 0}},
		} {
			if st, err := d.IsDuplicate(m); !errors.Is(err, ErrInvalid) || st != Unknown {
				t.Errorf("IsDuplicate(%+v) = %v, %v; want Unknown and ErrInvalid", m, st, err)
			}
			if err := d.RecordPersisted(m, Position{1, 0}); !errors.Is(err, ErrInvalid) {
				t.Errorf("RecordPersisted(%+v) = %v; want ErrInvalid", m, err)
			}
		}
		if d.Admission().Len() != 0 {
			t.Error("a malformed message changed the state")
		}
	})
}

func TestPurgeAndBound(t *testing.T) {
	forEach(t, func(t *testing.T, newA func() Admission) {
		now := time.Unix(1000, 0)
		d := New(newA(), Config{InactiveTimeout: time.Minute, MaxProducers: 3, Now: func() time.Time { return now }})
		for _, p := range []string{"a", "b", "c"} {
			d.ProducerConnected(p)
			mustStatus(t, d, msg(p, 1), NotDup)
			d.RecordPersisted(msg(p, 1), Position{1, 0})
		}
		d.ProducerDisconnected("a")
		now = now.Add(30 * time.Second)
		d.ProducerDisconnected("b")
		if got := d.PurgeInactive(); len(got) != 0 {
			t.Fatalf("purged %v before the timeout", got)
		}
		// A fourth producer exceeds the bound: the longest-disconnected goes.
		d.ProducerConnected("d")
		if _, ok := d.Persisted("a"); ok {
			t.Fatal("the bound did not forget the longest-disconnected producer")
		}
		if _, ok := d.Persisted("b"); !ok {
			t.Fatal("the bound forgot more than needed")
		}
		now = now.Add(61 * time.Second)
		if got := fmt.Sprint(d.PurgeInactive()); got != "[b]" {
			t.Fatalf("purged %s, want [b]", got)
		}
		if _, ok := d.Admission().Pushed("b"); ok {
			t.Fatal("purge left b's pushed sequence")
		}
		mustStatus(t, d, msg("b", 1), NotDup) // a forgotten producer starts afresh
		if _, ok := d.Persisted("c"); !ok {
			t.Fatal("a connected producer was purged")
		}
	})
}

// TestPurgeRacesAdmission deletes and admits one producer concurrently:
// every admission answers, Range never sees the producer twice, and
// afterwards Len and the maps agree with a last sequential admission.
// (Len is not checked meanwhile: CAS's sums striped counters, which a
// delete and a re-admission in flight can both still be counted in.)
func TestPurgeRacesAdmission(t *testing.T) {
	forEach(t, func(t *testing.T, newA func() Admission) {
		a := newA()
		var seqs atomic.Int64 // every admission's sequence, in the order taken
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), 1))
				for range 3000 {
					if r.IntN(10) == 0 {
						a.Delete("p")
						continue
					}
					seq := seqs.Add(1)
					// Rejected only by a pushed sequence at least as high:
					// whatever a purge did meanwhile.
					if ok, pushed := a.Admit("p", seq, seq); !ok && pushed < seq {
						errs <- fmt.Errorf("seq %d rejected by pushed %d", seq, pushed)
						return
					}
					n := 0
					a.Range(func(string, int64) bool { n++; return true })
					if n > 1 {
						errs <- fmt.Errorf("one producer visited %d times by Range", n)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		a.Delete("p")
		if _, ok := a.Pushed("p"); ok || a.Len() != 0 {
			t.Fatalf("after the race and a purge: tracked, len=%d", a.Len())
		}
		if ok, _ := a.Admit("p", 1, 1); !ok || a.Len() != 1 {
			t.Fatalf("after the race: accepted=%v len=%d", ok, a.Len())
		}
	})
}

// TestAdmissionsBetweenPurges: admissions run concurrently in epochs that
// purges end (a purge waits for the epoch's admissions, as the test's
// lock orders them, not the implementation). Within an epoch the
// producer's pushed sequence ends at the highest sequence accepted, every
// rejection names a pushed sequence at least as high as its own that was
// accepted in the same epoch, and after the purge the producer is
// forgotten: the next epoch starts over at any sequence.
func TestAdmissionsBetweenPurges(t *testing.T) {
	forEach(t, func(t *testing.T, newA func() Admission) {
		a := newA()
		var epoch sync.RWMutex
		var seqs atomic.Int64
		for e := range 50 {
			base := int64(1_000_000 * (50 - e)) // each epoch's sequences are lower than the last's
			seqs.Store(base)
			var mu sync.Mutex
			accepted := map[int64]bool{}
			var rejectedBy []int64
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 100 {
						epoch.RLock()
						seq := seqs.Add(1)
						ok, pushed := a.Admit("p", seq, seq)
						epoch.RUnlock()
						mu.Lock()
						if ok {
							accepted[seq] = true
						} else {
							rejectedBy = append(rejectedBy, pushed)
							if pushed < seq {
								t.Errorf("epoch %d: seq %d rejected by pushed %d", e, seq, pushed)
							}
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			epoch.Lock()
			high := int64(0)
			for s := range accepted {
				high = max(high, s)
			}
			if p, ok := a.Pushed("p"); !ok || p != high {
				t.Fatalf("epoch %d: pushed %d %v, the highest accepted is %d", e, p, ok, high)
			}
			for _, p := range rejectedBy {
				if !accepted[p] {
					t.Fatalf("epoch %d: a rejection named pushed %d, which no admission of the epoch stored", e, p)
				}
			}
			if len(accepted) == 0 {
				// Every sequence of this epoch is below the last epoch's:
				// had the purge not forgotten the producer, all would be
				// rejected.
				t.Fatalf("epoch %d: no admission accepted after the purge", e)
			}
			a.Delete("p")
			if _, ok := a.Pushed("p"); ok || a.Len() != 0 {
				t.Fatalf("epoch %d: the purge left the producer (len %d)", e, a.Len())
			}
			epoch.Unlock()
		}
	})
}
