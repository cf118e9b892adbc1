package skiplist

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

func newInt() *Map[int, int] { return New[int, int](cmp.Compare[int]) }

func keys(m *Map[int, int]) []int {
	var out []int
	m.All(func(k, _ int) bool { out = append(out, k); return true })
	return out
}

// TestModel runs random operations against a sorted-slice model.
func TestModel(t *testing.T) {
	seed := uint64(42)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	m := newInt()
	model := map[int]int{}
	sorted := func() []int {
		ks := make([]int, 0, len(model))
		for k := range model {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	for i := 0; i < 20000; i++ {
		k := r.IntN(500)
		switch op := r.IntN(6); op {
		case 0, 1:
			v := r.IntN(1000)
			got, loaded := m.PutIfAbsent(k, v)
			want, had := model[k]
			if !had {
				model[k], want = v, v
			}
			if loaded != had || got != want {
				t.Fatalf("op %d PutIfAbsent(%d, %d) = %d, %v; model %d, %v", i, k, v, got, loaded, want, had)
			}
		case 2:
			v, ok := m.Remove(k)
			want, had := model[k]
			delete(model, k)
			if ok != had || (ok && v != want) {
				t.Fatalf("op %d Remove(%d) = %d, %v; model %d, %v", i, k, v, ok, want, had)
			}
		case 3:
			v := r.IntN(1000)
			if cur, had := model[k]; had && r.IntN(2) == 0 {
				v = cur
			}
			ok := m.RemoveIf(k, v)
			cur, had := model[k]
			want := had && cur == v
			if want {
				delete(model, k)
			}
			if ok != want {
				t.Fatalf("op %d RemoveIf(%d, %d) = %v, want %v", i, k, v, ok, want)
			}
		case 4:
			ks := sorted()
			j, _ := slices.BinarySearch(ks, k+1)
			fk, fv, ok := m.Floor(k)
			if (j > 0) != ok || (ok && (fk != ks[j-1] || fv != model[fk])) {
				t.Fatalf("op %d Floor(%d) = %d, %d, %v", i, k, fk, fv, ok)
			}
			j, _ = slices.BinarySearch(ks, k)
			ck, _, ok := m.Ceiling(k)
			if (j < len(ks)) != ok || (ok && ck != ks[j]) {
				t.Fatalf("op %d Ceiling(%d) = %d, %v", i, k, ck, ok)
			}
		case 5:
			to := k + r.IntN(100)
			excl := r.IntN(2) == 0
			var got []int
			for it := m.Seek(k); it.Valid(); it.Next() {
				if key := it.Key(); key < to || (!excl && key == to) {
					got = append(got, key)
				} else {
					break
				}
			}
			var want []int
			for _, key := range sorted() {
				if key >= k && (key < to || (!excl && key == to)) {
					want = append(want, key)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("op %d Seek(%d) up to %d (exclusive %v) = %v, want %v", i, k, to, excl, got, want)
			}
		}
		if v, ok := m.Get(k); func() bool { w, h := model[k]; return ok != h || (ok && v != w) }() {
			t.Fatalf("op %d Get(%d) = %d, %v", i, k, v, ok)
		}
	}
	if !slices.Equal(keys(m), sorted()) || m.Len() != len(model) {
		t.Fatalf("final keys differ: len %d vs %d", m.Len(), len(model))
	}
}

// TestSameKeyRaces: of concurrent PutIfAbsent calls on one key exactly one
// inserts, and of concurrent RemoveIf calls exactly one removes.
func TestSameKeyRaces(t *testing.T) {
	m := newInt()
	for round := 0; round < 200; round++ {
		var inserted, removed atomic.Int32
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, loaded := m.PutIfAbsent(round, g); !loaded {
					inserted.Add(1)
				}
			}()
		}
		wg.Wait()
		v, _ := m.Get(round)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if m.RemoveIf(round, v) {
					removed.Add(1)
				}
			}()
		}
		wg.Wait()
		if inserted.Load() != 1 || removed.Load() != 1 {
			t.Fatalf("round %d: %d inserts and %d removals won, want 1 and 1", round, inserted.Load(), removed.Load())
		}
	}
	if m.Len() != 0 {
		t.Fatalf("%d keys left", m.Len())
	}
}

// TestConcurrentWritersAndReaders: writers own disjoint key ranges and keep
// their own model; readers iterate meanwhile and must see strictly
// ascending keys; at the end the map equals the union of the models.
func TestConcurrentWritersAndReaders(t *testing.T) {
	const writers, span, ops = 4, 300, 4000
	m := newInt()
	models := make([]map[int]bool, writers)
	var wg sync.WaitGroup
	var stop atomic.Bool
	var bad atomic.Int64
	for rd := 0; rd < 2; rd++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				last := -1
				for it := m.Seek(0); it.Valid(); it.Next() {
					if k := it.Key(); k <= last {
						bad.Add(1)
					}
					last = it.Key()
				}
				from := (writers - 1) * span // writers insert below it meanwhile
				for it := m.Seek(from); it.Valid(); it.Next() {
					if it.Key() < from {
						bad.Add(1)
					}
				}
				if k, _, ok := m.Ceiling(from); ok && k < from {
					bad.Add(1)
				}
				if k, _, ok := m.Floor(writers * span); ok && k > writers*span {
					bad.Add(1)
				}
			}
		}()
	}
	var ww sync.WaitGroup
	for w := 0; w < writers; w++ {
		models[w] = map[int]bool{}
		ww.Add(1)
		go func() {
			defer ww.Done()
			r := rand.New(rand.NewPCG(uint64(w), 3))
			for i := 0; i < ops; i++ {
				k := w*span + r.IntN(span)
				if r.IntN(3) == 0 {
					if _, ok := m.Remove(k); ok != models[w][k] {
						bad.Add(1)
					}
					delete(models[w], k)
				} else {
					if _, loaded := m.PutIfAbsent(k, k); loaded != models[w][k] {
						bad.Add(1)
					}
					models[w][k] = true
				}
			}
		}()
	}
	ww.Wait()
	stop.Store(true)
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d inconsistencies under concurrency", bad.Load())
	}
	var want []int
	for _, mdl := range models {
		for k := range mdl {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	if got := keys(m); !slices.Equal(got, want) || m.Len() != len(want) {
		t.Fatalf("final map has %d keys (Len %d), the models %d", len(got), m.Len(), len(want))
	}
}

func TestFloorCeilingEmptyAndBounds(t *testing.T) {
	m := newInt()
	if _, _, ok := m.Floor(5); ok {
		t.Error("Floor on an empty map")
	}
	if _, _, ok := m.Ceiling(5); ok {
		t.Error("Ceiling on an empty map")
	}
	m.PutIfAbsent(10, 1)
	m.PutIfAbsent(20, 2)
	if k, _, _ := m.Floor(15); k != 10 {
		t.Errorf("Floor(15) = %d", k)
	}
	if k, _, _ := m.Floor(20); k != 20 {
		t.Errorf("Floor(20) = %d", k)
	}
	if _, _, ok := m.Floor(9); ok {
		t.Error("Floor below the first key")
	}
	if k, _, _ := m.Ceiling(11); k != 20 {
		t.Errorf("Ceiling(11) = %d", k)
	}
	if _, _, ok := m.Ceiling(21); ok {
		t.Error("Ceiling above the last key")
	}
}

// TestIterSkipsRemovedKeys: Seek lands on the first key at least its
// argument, Next steps over keys removed after the iterator was made, and
// an iterator past the last key is not Valid.
func TestIterSkipsRemovedKeys(t *testing.T) {
	m := newInt()
	if it := m.Seek(0); it.Valid() {
		t.Fatal("Seek on an empty map is Valid")
	}
	for k := 10; k <= 50; k += 10 {
		m.PutIfAbsent(k, k*2)
	}
	it := m.Seek(15)
	if !it.Valid() || it.Key() != 20 || it.Value() != 40 {
		t.Fatalf("Seek(15) at %d", it.Key())
	}
	m.Remove(30)
	m.Remove(40)
	it.Next()
	if !it.Valid() || it.Key() != 50 {
		t.Fatalf("Next after removing 30 and 40 at %v", it.Key())
	}
	if it.Next(); it.Valid() {
		t.Fatal("Next past the last key is Valid")
	}
	if it := m.Seek(51); it.Valid() {
		t.Fatal("Seek above the last key is Valid")
	}
}

// TestSeekFromAboveATailAppender: a writer appends keys at the tail while
// readers iterate from above every key: a node appended after the search
// passed its place must not be returned.
func TestSeekFromAboveATailAppender(t *testing.T) {
	m := newInt()
	const n = 50000
	var stop atomic.Bool
	var bad atomic.Int64
	var wg sync.WaitGroup
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if it := m.Seek(n + 1); it.Valid() {
					bad.Add(1)
				}
				if _, _, ok := m.Ceiling(n + 1); ok {
					bad.Add(1)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		m.PutIfAbsent(i, i)
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d keys below the start returned", bad.Load())
	}
}
