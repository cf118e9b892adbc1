package cache

import "github.com/ledgerbench/ledgerbench/impl/internal/skiplist"

// SkipList is the range cache before PR #26821: one skip-list node per
// entry, keyed by position.
type SkipList struct {
	core
	entries *skiplist.Map[Position, *wrapper]
}

// NewSkipList returns an empty skip-list cache evicted through q.
func NewSkipList(q *RemovalQueue) *SkipList {
	c := &SkipList{core: core{queue: q}, entries: skiplist.New[Position, *wrapper](ComparePositions)}
	c.self = c
	return c
}

type skipInserter struct{ c *SkipList }

func (c *SkipList) NewInserter() Inserter { return skipInserter{c} }

func (c *SkipList) Put(key Position, e *Entry, length int64) (bool, error) {
	return skipInserter{c}.Put(key, e, length)
}

func (in skipInserter) Put(key Position, e *Entry, length int64) (bool, error) {
	return in.c.insert(key, e, length, func() *wrapper {
		w := &wrapper{}
		in.c.fill(w, key, e, length)
		if _, loaded := in.c.entries.PutIfAbsent(key, w); loaded {
			return nil
		}
		return w
	})
}

func (in skipInserter) UpdateIfCached(key Position, fn func(*Entry)) bool {
	w, _ := in.c.entries.Get(key)
	return updateCached(w, key, fn)
}

func (c *SkipList) Get(key Position) *Entry {
	w, ok := c.entries.Get(key)
	if !ok {
		return nil
	}
	return w.retained(key.Ledger, key.Entry, true)
}

func (c *SkipList) Exists(key Position) bool {
	_, ok := c.entries.Get(key)
	return ok
}

func (c *SkipList) forEachWrapper(first, last Position, lastInclusive bool, visit func(w *wrapper, ledger, entry int64)) {
	it := c.entries.Seek(first)
	if !it.Valid() { // no entry from the first position on: a miss costs one search
		return
	}
	le, empty := rangeOf(first, last, lastInclusive)
	if empty {
		return
	}
	for ; it.Valid(); it.Next() {
		k := it.Key()
		if k.Compare(le.Ledger, le.Entry) > 0 {
			return
		}
		visit(it.Value(), k.Ledger, k.Entry)
	}
}

func (c *SkipList) Clear() (int, int64) {
	var ctr counters
	for c.entries.Len() > 0 {
		c.entries.All(func(k Position, w *wrapper) bool {
			removeLocked(c, w, k.Ledger, k.Entry, &ctr)
			return true
		})
	}
	c.size.Add(-ctr.bytes)
	return ctr.entries, ctr.bytes
}

func (c *SkipList) removeEntry(key *Position, value *Entry, w *wrapper, ctr *counters, updateSize bool) bool {
	if key != nil {
		c.entries.RemoveIf(*key, w)
	}
	return c.finishRemove(key, value, w, ctr, updateSize)
}

func (c *SkipList) NumberOfEntries() int { return c.entries.Len() }
func (c *SkipList) NumberOfPages() int   { return 0 }
