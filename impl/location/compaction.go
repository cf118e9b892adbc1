package location

import (
	"bytes"
	"container/heap"
	"os"
	"slices"
)

// Compaction is leveled: when level 0 holds L0Trigger tables they are
// merged with the overlapping level-1 tables into level 1; when level n
// (n ≥ 1) outgrows L1MaxBytes·10^(n−1), one of its tables (round robin)
// is merged with the overlapping tables of level n+1. Outputs are cut at
// TargetFileSize bytes or MaxKeysPerFile keys. A key present in several
// inputs keeps its newest value; keys in deleted ranges are dropped.
// Compactions run in the writer's goroutine after a flush, one at a time.

func (s *Store) levelBytes(l int) int64 {
	var n int64
	for _, t := range s.levels[l] {
		n += t.size
	}
	return n
}

func (s *Store) maybeCompact() error {
	for {
		s.mu.RLock()
		l0 := len(s.levels[0])
		s.mu.RUnlock()
		if l0 >= s.o.L0Trigger {
			if err := s.compactLevel(0, s.levels[0]); err != nil {
				return err
			}
			continue
		}
		picked := false
		limit := s.o.L1MaxBytes
		for l := 1; l < numLevels-1; l++ {
			if s.levelBytes(l) > limit {
				ts := s.levels[l]
				t := ts[s.rr[l]%len(ts)]
				s.rr[l]++
				if err := s.compactLevel(l, []*table{t}); err != nil {
					return err
				}
				picked = true
				break
			}
			limit *= 10
		}
		if !picked {
			return nil
		}
	}
}

// compactLevel merges inputs (of level l) with the overlapping tables of
// level l+1 into level l+1.
func (s *Store) compactLevel(l int, inputs []*table) error {
	lo, hi := inputs[0].info.Smallest, inputs[0].info.Largest
	for _, t := range inputs {
		if bytes.Compare(t.info.Smallest, lo) < 0 {
			lo = t.info.Smallest
		}
		if bytes.Compare(t.info.Largest, hi) > 0 {
			hi = t.info.Largest
		}
	}
	var overlap []*table
	for _, t := range s.levels[l+1] {
		if bytes.Compare(t.info.Largest, lo) >= 0 && bytes.Compare(t.info.Smallest, hi) <= 0 {
			overlap = append(overlap, t)
		}
	}
	all := append(slices.Clone(inputs), overlap...) // newest first
	return s.mergeInto(all, l+1)
}

// Compact merges every table into the bottom level.
func (s *Store) Compact() error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	if err := s.flushLocked(); err != nil {
		return err
	}
	var all []*table
	for l := range s.levels {
		all = append(all, s.levels[l]...) // level order is recency order
	}
	if len(all) == 0 {
		return nil
	}
	return s.mergeInto(all, numLevels-1)
}

type mergeSrc struct {
	it    *tableIter
	key   []byte
	value []byte
	rank  int // lower is newer
}

type mergeHeap []*mergeSrc

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key, h[j].key); c != 0 {
		return c < 0
	}
	return h[i].rank < h[j].rank
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeSrc)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeInto merges tables (newest first) into new tables at level out and
// installs them in place of the inputs.
func (s *Store) mergeInto(tables []*table, out int) error {
	h := &mergeHeap{}
	for i, t := range tables {
		it, err := t.iter()
		if err != nil {
			return err
		}
		src := &mergeSrc{it: it, rank: i}
		if k, v, ok := it.next(); ok {
			src.key, src.value = k, v
			*h = append(*h, src)
		} else if it.err != nil {
			return it.err
		}
	}
	heap.Init(h)
	var (
		outs  []*table
		infos []TableInfo
		w     *tableWriter
		last  []byte
		fail  = func(err error) error {
			if w != nil {
				w.abort()
			}
			for _, t := range outs {
				t.close()
				os.Remove(t.path)
			}
			return err
		}
	)
	var nums []uint64
	closeOut := func() error {
		info, err := w.finish()
		path := w.path
		w = nil
		if err != nil {
			return err
		}
		num := nums[len(nums)-1]
		t, err := openTable(path, num, s.o.Cache)
		if err != nil {
			return err
		}
		outs, infos = append(outs, t), append(infos, info)
		return nil
	}
	for h.Len() > 0 {
		src := (*h)[0]
		k, v := src.key, src.value
		dup := last != nil && bytes.Equal(k, last)
		_, del := s.deletedRange(k)
		if !dup && !del {
			if w != nil && (w.off >= uint64(s.o.TargetFileSize) || (s.o.MaxKeysPerFile > 0 && w.keys >= s.o.MaxKeysPerFile)) {
				if err := closeOut(); err != nil {
					return fail(err)
				}
			}
			if w == nil {
				num := s.allocFile()
				nums = append(nums, num)
				var err error
				if w, err = newTableWriter(tableName(s.dir, num), s.o.Table); err != nil {
					return fail(err)
				}
			}
			if err := w.add(k, v); err != nil {
				return fail(err)
			}
		}
		last = append(last[:0], k...)
		if nk, nv, ok := src.it.next(); ok {
			src.key, src.value = nk, nv
			heap.Fix(h, 0)
		} else {
			if src.it.err != nil {
				return fail(src.it.err)
			}
			heap.Pop(h)
		}
	}
	if w != nil {
		if err := closeOut(); err != nil {
			return fail(err)
		}
	}
	return s.install(tables, outs, infos, out)
}
