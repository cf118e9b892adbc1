package location

// Perf counts what gets do, like RocksDB's PerfContext: pass one to Get or
// Floor and it accumulates. Reads are block reads from the file (through
// the OS page cache), hits are block-cache hits. A Perf is used by one
// goroutine at a time.
type Perf struct {
	Gets int64

	CacheHits, FilterHits, IndexHits, DataHits int64

	BlockReads, BlockReadBytes   int64
	FilterReads, FilterReadBytes int64
	IndexReads, IndexReadBytes   int64
	DataReads, DataReadBytes     int64
	ChecksumBytes                int64

	BloomHits   int64 // a filter said the key may be in the table
	BloomMisses int64 // a filter ruled the table out
	SSTProbes   int64 // tables consulted
}

// blockKind is what a block holds; it decides the counters a read or a
// hit goes to and the role in the cache's content snapshot.
type blockKind uint8

const (
	kindData        blockKind = iota
	kindFilter                // a full filter or a filter partition
	kindFilterIndex           // the top-level filter index
	kindIndex                 // a single index block or an index partition
	kindIndexTop              // the top-level index
	numKinds
)

var kindNames = [numKinds]string{"DataBlock", "FilterBlock", "FilterMetaBlock", "IndexBlock", "IndexMetaBlock"}

func (k blockKind) String() string { return kindNames[k] }

func (p *Perf) hit(k blockKind) {
	if p == nil {
		return
	}
	p.CacheHits++
	switch k {
	case kindData:
		p.DataHits++
	case kindFilter, kindFilterIndex:
		p.FilterHits++
	default:
		p.IndexHits++
	}
}

func (p *Perf) read(k blockKind, n int64) {
	if p == nil {
		return
	}
	p.BlockReads++
	p.BlockReadBytes += n
	p.ChecksumBytes += n
	switch k {
	case kindData:
		p.DataReads++
		p.DataReadBytes += n
	case kindFilter, kindFilterIndex:
		p.FilterReads++
		p.FilterReadBytes += n
	default:
		p.IndexReads++
		p.IndexReadBytes += n
	}
}
