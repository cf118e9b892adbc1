package cursor

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func forEach(t *testing.T, f func(t *testing.T, name string, c Container)) {
	for _, name := range Implementations {
		t.Run(name, func(t *testing.T) {
			c, err := New(name)
			if err != nil {
				t.Fatal(err)
			}
			f(t, name, c)
		})
	}
}

func TestReferenceExample(t *testing.T) {
	forEach(t, func(t *testing.T, name string, c Container) {
		c.Add("A", Position{0, 5})
		c.Add("B", Position{0, 5})
		c.Add("C", Position{0, 7})
		if p, ok := c.Slowest(); !ok || p != (Position{0, 5}) {
			t.Fatalf("slowest %v", p)
		}
		if name == "heap" {
			if _, ok := c.CountAtOrBefore("A"); ok {
				t.Fatal("the heap claims to count")
			}
			return
		}
		var got []int
		for _, n := range []string{"A", "B", "C"} {
			k, _ := c.CountAtOrBefore(n)
			got = append(got, k)
		}
		if fmt.Sprint(got) != "[2 2 3]" {
			t.Fatalf("counts %v, want [2 2 3]", got)
		}
		if err := c.Add("A", Position{}); !errors.Is(err, ErrDuplicate) {
			t.Errorf("duplicate add: %v", err)
		}
		if err := c.Update("Z", Position{}); !errors.Is(err, ErrUnknown) {
			t.Errorf("unknown update: %v", err)
		}
	})
}

// TestModel runs random adds, moves and removals against a plain map and
// checks every count and the slowest position after each query.
func TestModel(t *testing.T) {
	forEach(t, func(t *testing.T, name string, c Container) {
		seed := uint64(7)
		t.Logf("seed %d", seed)
		r := rand.New(rand.NewPCG(seed, 1))
		model := map[string]Position{}
		for i := 0; i < 6000; i++ {
			n := fmt.Sprintf("c%d", r.IntN(60))
			pos := Position{int64(r.IntN(3)), int64(r.IntN(40))}
			switch op := r.IntN(10); {
			case op < 3:
				err := c.Add(n, pos)
				if _, had := model[n]; had != (err != nil) {
					t.Fatalf("op %d add %s: %v", i, n, err)
				}
				if err == nil {
					model[n] = pos
				}
			case op < 7:
				err := c.Update(n, pos)
				if _, had := model[n]; had != (err == nil) {
					t.Fatalf("op %d update %s: %v", i, n, err)
				}
				if err == nil {
					model[n] = pos
				}
			case op < 8:
				_, had := model[n]
				if c.Remove(n) != had {
					t.Fatalf("op %d remove %s", i, n)
				}
				delete(model, n)
			default:
				if c.Size() != len(model) {
					t.Fatalf("op %d size %d, model %d", i, c.Size(), len(model))
				}
				slow, ok := c.Slowest()
				var want Position
				for _, p := range model {
					if !ok || want == (Position{}) || p.Compare(want) < 0 {
						want = p
					}
				}
				if ok != (len(model) > 0) || (ok && slow.Compare(minOf(model)) != 0) {
					t.Fatalf("op %d slowest %v %v, want %v", i, slow, ok, minOf(model))
				}
				if name == "heap" {
					continue
				}
				for cn, cp := range model {
					want := atOrBefore(model, cp)
					if got, _ := c.CountAtOrBefore(cn); got != want {
						t.Fatalf("op %d count of %s at %v = %d, want %d", i, cn, cp, got, want)
					}
				}
			}
		}
	})
}

func minOf(m map[string]Position) Position {
	first := true
	var out Position
	for _, p := range m {
		if first || p.Compare(out) < 0 {
			out, first = p, false
		}
	}
	return out
}

// TestConcurrentSeeks: goroutines seek their own cursors forward and
// query counts while others do the same; positions only grow, so every
// count is between 1 and the number of cursors, and at the end the counts
// match a recomputation.
func TestConcurrentSeeks(t *testing.T) {
	forEach(t, func(t *testing.T, name string, c Container) {
		const goroutines, perG, seeks = 4, 10, 500
		var wg sync.WaitGroup
		final := make([]map[string]Position, goroutines)
		for g := 0; g < goroutines; g++ {
			final[g] = map[string]Position{}
			for k := 0; k < perG; k++ {
				n := fmt.Sprintf("g%d-%d", g, k)
				c.Add(n, Position{0, int64(k)})
				final[g][n] = Position{0, int64(k)}
			}
		}
		var bad sync.Map
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), 2))
				for i := 0; i < seeks; i++ {
					n := fmt.Sprintf("g%d-%d", g, r.IntN(perG))
					p := final[g][n].After(int64(1 + r.IntN(100)))
					if err := c.Update(n, p); err != nil {
						bad.Store(n, err)
					}
					final[g][n] = p
					if got, ok := c.CountAtOrBefore(n); ok && (got < 1 || got > goroutines*perG) {
						bad.Store(n, got)
					}
					c.Slowest()
				}
			}()
		}
		wg.Wait()
		bad.Range(func(k, v any) bool { t.Errorf("%v: %v", k, v); return true })
		if name == "heap" {
			return
		}
		all := map[string]Position{}
		for _, m := range final {
			for k, v := range m {
				all[k] = v
			}
		}
		for n, p := range all {
			want := atOrBefore(all, p)
			if got, _ := c.CountAtOrBefore(n); got != want {
				t.Fatalf("%s: count %d, want %d", n, got, want)
			}
		}
	})
}

// TestForwardMoves checks every count after each small forward move
// (including moves to the same position and into and out of shared
// groups), one query per move so the incremental path applies it.
func TestForwardMoves(t *testing.T) {
	forEach(t, func(t *testing.T, name string, c Container) {
		if name == "heap" {
			return
		}
		r := rand.New(rand.NewPCG(11, 1))
		model := make([]int64, 40)
		for i := range model {
			model[i] = int64(r.IntN(20))
			c.Add(fmt.Sprint(i), Position{0, model[i]})
		}
		c.CountAtOrBefore("0")
		for op := 0; op < 3000; op++ {
			moves := 1 + r.IntN(3)
			for range moves {
				i := r.IntN(len(model))
				model[i] += int64(r.IntN(4))
				if err := c.Update(fmt.Sprint(i), Position{0, model[i]}); err != nil {
					t.Fatal(err)
				}
			}
			for i, p := range model {
				want := 0
				for _, q := range model {
					if q <= p {
						want++
					}
				}
				if got, _ := c.CountAtOrBefore(fmt.Sprint(i)); got != want {
					t.Fatalf("op %d: count of %d at %d = %d, want %d", op, i, p, got, want)
				}
			}
			if p, _ := c.Slowest(); p.Entry != slices.Min(model) {
				t.Fatalf("op %d: slowest %v, want %d", op, p, slices.Min(model))
			}
		}
	})
}

// TestChurn removes 1–5 of the oldest cursors and adds as many after the
// newest (some at the newest's position) before each round of queries, so
// several removals are pending at once.
func TestChurn(t *testing.T) {
	forEach(t, func(t *testing.T, name string, c Container) {
		if name == "heap" {
			return
		}
		r := rand.New(rand.NewPCG(13, 1))
		type cur struct {
			name string
			pos  int64
		}
		var live []cur
		next := int64(0)
		add := func() {
			if r.IntN(3) > 0 {
				next++
			}
			n := cur{fmt.Sprint("c", len(live), "-", next, "-", r.Uint32()), next}
			if err := c.Add(n.name, Position{0, n.pos}); err != nil {
				t.Fatal(err)
			}
			live = append(live, n)
		}
		for range 100 {
			add()
		}
		for round := 0; round < 500; round++ {
			k := 1 + r.IntN(5)
			for _, n := range live[:k] {
				if !c.Remove(n.name) {
					t.Fatalf("round %d: %s not tracked", round, n.name)
				}
			}
			live = live[k:]
			for range k {
				add()
			}
			for _, n := range live {
				want := 0
				for _, m := range live {
					if m.pos <= n.pos {
						want++
					}
				}
				if got, _ := c.CountAtOrBefore(n.name); got != want {
					t.Fatalf("round %d: count of %s = %d, want %d", round, n.name, got, want)
				}
			}
			if p, _ := c.Slowest(); p.Entry != live[0].pos || c.Size() != len(live) {
				t.Fatalf("round %d: slowest %v size %d, want %d and %d", round, p, c.Size(), live[0].pos, len(live))
			}
		}
	})
}

// atOrBefore is the model's CountAtOrBefore: how many of the cursors are
// at or before p.
func atOrBefore(cursors map[string]Position, p Position) int {
	n := 0
	for _, q := range cursors {
		if q.Compare(p) <= 0 {
			n++
		}
	}
	return n
}

// TestConcurrentWritersOnSharedNames: four goroutines add, move, remove
// and query the same 16 cursors at once. Operations on one name are
// serialized by the test (a lock per name), so a model of each name is
// exact and every answer is checked against it: Add is ErrDuplicate
// exactly when the name is tracked, Update ErrUnknown exactly when it is
// not, Remove true exactly when it was, and a tracked name counts at
// least itself and at most every name. Operations on different names
// run concurrently inside the container, which shares its list, counters
// and pending changes between them. At the end, every count, the size and
// the slowest position match the model.
func TestConcurrentWritersOnSharedNames(t *testing.T) {
	forEach(t, func(t *testing.T, name string, c Container) {
		const goroutines, names, ops = 4, 16, 3000
		var locks [names]sync.Mutex
		var model [names]*Position
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), 30))
				for range ops {
					k := r.IntN(names)
					n := fmt.Sprint("c", k)
					locks[k].Lock()
					err := step(c, name, n, &model[k], r, names)
					locks[k].Unlock()
					if err != nil {
						errs <- err
						return
					}
					if r.IntN(8) == 0 {
						if p, ok := c.Slowest(); ok && p.Ledger != 0 {
							errs <- fmt.Errorf("slowest %v: no cursor was ever on ledger %d", p, p.Ledger)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		final := map[string]Position{}
		for k, p := range model {
			if p != nil {
				final[fmt.Sprint("c", k)] = *p
			}
		}
		if c.Size() != len(final) {
			t.Fatalf("size %d, model %d", c.Size(), len(final))
		}
		if p, ok := c.Slowest(); ok != (len(final) > 0) || ok && p != slowestOf(final) {
			t.Fatalf("slowest %v %v, model %v", p, ok, slowestOf(final))
		}
		if name == "heap" {
			return
		}
		for n, p := range final {
			if got, _ := c.CountAtOrBefore(n); got != atOrBefore(final, p) {
				t.Fatalf("%s at %v: count %d, model %d", n, p, got, atOrBefore(final, p))
			}
		}
	})
}

// step does one random operation on cursor n, whose model is *m (nil:
// not tracked), and checks its answer against the model.
func step(c Container, impl, n string, m **Position, r *rand.Rand, names int) error {
	switch op := r.IntN(10); {
	case op < 3: // add
		p := Position{0, int64(r.IntN(50))}
		err := c.Add(n, p)
		switch {
		case *m != nil && !errors.Is(err, ErrDuplicate):
			return fmt.Errorf("Add of tracked %s: %v, want ErrDuplicate", n, err)
		case *m == nil && err != nil:
			return fmt.Errorf("Add of untracked %s: %v", n, err)
		case *m == nil:
			*m = &p
		}
	case op < 7: // move forward
		var p Position
		if *m != nil {
			p = (*m).After(int64(1 + r.IntN(5)))
		}
		err := c.Update(n, p)
		switch {
		case *m == nil && !errors.Is(err, ErrUnknown):
			return fmt.Errorf("Update of untracked %s: %v, want ErrUnknown", n, err)
		case *m != nil && err != nil:
			return fmt.Errorf("Update of tracked %s: %v", n, err)
		case *m != nil:
			*m = &p
		}
	case op < 8: // remove
		if got := c.Remove(n); got != (*m != nil) {
			return fmt.Errorf("Remove(%s) = %v, tracked %v", n, got, *m != nil)
		}
		*m = nil
	default: // count
		got, ok := c.CountAtOrBefore(n)
		if ok && impl == "heap" {
			return fmt.Errorf("the heap counted %s", n)
		}
		if ok && *m != nil && (got < 1 || got > names) {
			return fmt.Errorf("count of tracked %s: %d, want 1 to %d", n, got, names)
		}
	}
	return nil
}

func slowestOf(cs map[string]Position) Position {
	var s Position
	first := true
	for _, p := range cs {
		if first || p.Compare(s) < 0 {
			s, first = p, false
		}
	}
	return s
}
