package location

// partitionedReader reads a table of the partitioned layout: a
// top-level filter index over filter partitions and a top-level index
// over index partitions. Both top-level blocks are pinned in the cache
// (held references) for the table's lifetime, and their entries decoded
// once into fences that each get binary-searches.
type partitionedReader struct {
	t                   *table
	topFilter, topIndex *cached
	filterFences        *fences
	indexFences         *fences
}

// openPartitioned pins t's top-level blocks and decodes their fences.
func openPartitioned(t *table) (*partitionedReader, error) {
	r := &partitionedReader{t: t}
	var err error
	if r.topFilter, err = t.get(t.filterH, kindFilterIndex, nil); err != nil {
		return nil, err
	}
	if r.topIndex, err = t.get(t.indexH, kindIndexTop, nil); err != nil {
		t.cache.release(r.topFilter)
		return nil, err
	}
	if r.filterFences, err = decodeFences(r.topFilter.blk); err == nil {
		r.indexFences, err = decodeFences(r.topIndex.blk)
	}
	if err != nil {
		r.close()
		return nil, t.corrupt("top-level", t.indexH.offset, err)
	}
	return r, nil
}

func (r *partitionedReader) filterFor(key []byte) (handle, bool) { return r.filterFences.seekGE(key) }

func (r *partitionedReader) indexFor(key []byte, p *Perf) (*cached, bool, error) {
	ph, ok := r.indexFences.seekGE(key)
	if !ok {
		return nil, false, nil
	}
	ix, err := r.t.get(ph, kindIndex, p)
	return ix, err == nil, err
}

// prevDataHandle looks in the partition holding key's block, or else
// takes the last entry of the partition before it (whose fence, its last
// key, is below key).
func (r *partitionedReader) prevDataHandle(key []byte, p *Perf) (handle, bool, error) {
	i := r.indexFences.search(key)
	for _, pi := range []int{i, i - 1} {
		if pi < 0 || pi >= len(r.indexFences.handles) {
			continue
		}
		ph := r.indexFences.handles[pi]
		ix, err := r.t.get(ph, kindIndex, p)
		if err != nil {
			return handle{}, false, err
		}
		h, ok, err := r.t.searchPrev(ix.blk, ph.offset, key)
		r.t.cache.release(ix)
		if err != nil || ok {
			return h, ok, err
		}
	}
	return handle{}, false, nil
}

func (r *partitionedReader) indexParts() []handle { return r.indexFences.handles }

func (r *partitionedReader) close() {
	if r.topFilter != nil {
		r.t.cache.release(r.topFilter)
		r.t.cache.release(r.topIndex)
		r.topFilter, r.topIndex = nil, nil
	}
}
