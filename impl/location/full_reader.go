package location

// fullReader reads a table of the full layout: one filter over every key
// and one index block over every data block, both read through the block
// cache like data blocks.
type fullReader struct{ t *table }

func (r fullReader) filterFor([]byte) (handle, bool) { return r.t.filterH, true }

func (r fullReader) indexFor(_ []byte, p *Perf) (*cached, bool, error) {
	ix, err := r.t.get(r.t.indexH, kindIndex, p)
	return ix, err == nil, err
}

func (r fullReader) prevDataHandle(key []byte, p *Perf) (handle, bool, error) {
	ix, err := r.t.get(r.t.indexH, kindIndex, p)
	if err != nil {
		return handle{}, false, err
	}
	defer r.t.cache.release(ix)
	return r.t.searchPrev(ix.blk, r.t.indexH.offset, key)
}

func (r fullReader) indexParts() []handle { return []handle{r.t.indexH} }

func (fullReader) close() {}
