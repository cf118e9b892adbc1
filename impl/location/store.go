package location

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ledgerbench/ledgerbench/impl/internal/skiplist"
	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
)

// KeySize is the length of every key: BookKeeper's (ledger, entry) as two
// big-endian uint64s.
const KeySize = 16

// Errors of the store.
var (
	ErrKeySize  = errors.New("key must be 16 bytes")
	ErrDeleted  = errors.New("key range deleted")
	ErrClosed   = errors.New("store closed")
	ErrNoDir    = errors.New("data directory does not exist")
	ErrNotEmpty = errors.New("data directory is not empty")
	ErrReadOnly = errors.New("store opened read-only")
)

// Options configure a Store.
type Options struct {
	Dir             string
	CreateIfMissing bool
	Table           TableOptions
	// Cache is the block cache; several stores may share one. Required.
	Cache *BlockCache

	MemtableSize   int64 // bytes before a flush (64 MiB)
	TargetFileSize int64 // bytes of a compaction output table (64 MiB)
	MaxKeysPerFile int   // also cut output tables at this many keys (0: no limit)
	L0Trigger      int   // L0 tables that trigger a compaction (4)
	L1MaxBytes     int64 // level 1 size; each level below is 10× (256 MiB)
	// DisableAutoCompaction leaves the shape to Compact and Build.
	DisableAutoCompaction bool
	// Sync fsyncs the write-ahead log on every batch.
	Sync bool
	// ReadOnly opens without writing anything: the logs are replayed into
	// the memtable but no file is created, rewritten or removed, and every
	// write fails with ErrReadOnly (benchmarks open shared datasets so).
	ReadOnly bool
}

func (o *Options) fill() error {
	if o.Cache == nil {
		return errors.New("options: no block cache")
	}
	if err := o.Table.fill(); err != nil {
		return err
	}
	if o.MemtableSize <= 0 {
		o.MemtableSize = 64 << 20
	}
	if o.TargetFileSize <= 0 {
		o.TargetFileSize = 64 << 20
	}
	if o.L0Trigger <= 0 {
		o.L0Trigger = 4
	}
	if o.L1MaxBytes <= 0 {
		o.L1MaxBytes = 256 << 20
	}
	return nil
}

type memValue struct{ v atomic.Pointer[[]byte] }

// memKey is a key as the memtable stores it: a fixed array, so a lookup
// converts the caller's slice without allocating.
type memKey = [KeySize]byte

func compareMemKeys(a, b memKey) int { return bytes.Compare(a[:], b[:]) }

type memtable struct {
	m    *skiplist.Map[memKey, *memValue]
	size atomic.Int64
}

func newMemtable() *memtable { return &memtable{m: skiplist.New[memKey, *memValue](compareMemKeys)} }

// put stores key → value (one writer at a time); key is KeySize bytes.
func (mt *memtable) put(key, value []byte) {
	v := append([]byte(nil), value...)
	mv := &memValue{}
	mv.v.Store(&v)
	if old, loaded := mt.m.PutIfAbsent(memKey(key), mv); loaded {
		old.v.Store(&v)
		mt.size.Add(int64(len(value)))
		return
	}
	mt.size.Add(int64(len(key) + len(value) + 48))
}

func (mt *memtable) get(key []byte) ([]byte, bool) {
	mv, ok := mt.m.Get(memKey(key))
	if !ok {
		return nil, false
	}
	return *mv.v.Load(), true
}

func (mt *memtable) floor(key []byte) ([]byte, []byte, bool) {
	k, mv, ok := mt.m.Floor(memKey(key))
	if !ok {
		return nil, nil, false
	}
	return k[:], *mv.v.Load(), true
}

// Store is an LSM key-value store of 16-byte keys: a memtable with a
// write-ahead log, flushes to level 0, leveled compaction, and tables in
// the block-based format read through a block cache. Reads are safe for
// concurrent use with each other and with writes; writes are serialized.
type Store struct {
	o   Options
	dir string

	writeMu sync.Mutex // one writer: Apply, DeleteRange, Flush, Compact
	mu      sync.RWMutex
	mem     *memtable
	log     *wal
	levels  [numLevels][]*table // L0 newest first; others by smallest key
	man     *manifest
	closed  bool
	rr      [numLevels]int // round-robin compaction pointer per level
}

// Open opens (or, with CreateIfMissing, creates) the store in o.Dir.
func Open(o Options) (*Store, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	st, err := os.Stat(o.Dir)
	switch {
	case os.IsNotExist(err) && o.CreateIfMissing:
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return nil, err
		}
	case os.IsNotExist(err):
		return nil, fmt.Errorf("%w: %s", ErrNoDir, o.Dir)
	case err != nil:
		return nil, fmt.Errorf("data directory %s: %w", o.Dir, err)
	case !st.IsDir():
		return nil, fmt.Errorf("data directory %s: not a directory", o.Dir)
	}
	m, found, err := readManifest(o.Dir)
	if err != nil {
		return nil, err
	}
	if !found {
		if err := checkNoData(o.Dir); err != nil {
			return nil, err
		}
	}
	s := &Store{o: o, dir: o.Dir, man: m, mem: newMemtable()}
	if m.Layout == "" {
		m.Layout = o.Table.Layout
	}
	for lvl, files := range m.Levels {
		for _, fm := range files {
			t, err := openTable(tableName(s.dir, fm.Num), fm.Num, o.Cache)
			if err != nil {
				s.closeTables()
				return nil, err
			}
			t.info.Smallest, t.info.Largest = fm.Smallest, fm.Largest
			s.levels[lvl] = append(s.levels[lvl], t)
		}
	}
	if err := s.recover(); err != nil {
		s.closeTables()
		return nil, err
	}
	s.checkVersion()
	return s, nil
}

// checkNoData refuses a directory without a MANIFEST that holds tables or
// non-empty logs: without the manifest nothing accounts for them, and
// opening would treat them as the orphans of a crash and delete them.
// (A store's first log is created, empty, just before its first manifest,
// so an empty log alone is the remains of a crash during creation.)
func checkNoData(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var data []string
	for _, e := range entries {
		name := e.Name()
		info, err := e.Info()
		if err != nil {
			return err
		}
		if strings.HasSuffix(name, ".sst") || (strings.HasSuffix(name, ".log") && info.Size() > 0) {
			data = append(data, name)
		}
	}
	if len(data) > 0 {
		return fmt.Errorf("%w: %s has no MANIFEST but holds %d tables and logs (%s): refusing to open a store whose data nothing accounts for",
			ErrCorrupt, dir, len(data), strings.Join(data[:min(len(data), 5)], ", "))
	}
	return nil
}

// recover replays the logs newer than the manifest's into the memtable,
// flushes it, starts a new log and removes files no manifest refers to.
func (s *Store) recover() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	var logs []uint64
	for _, e := range entries {
		var n uint64
		if _, err := fmt.Sscanf(e.Name(), "%06d.log", &n); err == nil && strings.HasSuffix(e.Name(), ".log") && n >= s.man.LogNumber {
			logs = append(logs, n)
		}
	}
	slices.Sort(logs)
	if !s.o.ReadOnly {
		// Orphans first: a crashed flush or compaction may have left tables
		// under the very numbers the replay's flush is about to take.
		if err := s.removeObsolete(); err != nil {
			return err
		}
	}
	if s.o.ReadOnly {
		for _, n := range logs {
			if err := replayWAL(logName(s.dir, n), func(k, v []byte) error { s.mem.put(k, v); return nil }); err != nil {
				return fmt.Errorf("replay %s: %w", logName(s.dir, n), err)
			}
		}
		return nil
	}
	for _, n := range logs {
		if err := replayWAL(logName(s.dir, n), func(k, v []byte) error {
			if len(k) != KeySize {
				return fmt.Errorf("log %d: %w", n, ErrKeySize)
			}
			s.mem.put(k, v)
			return nil
		}); err != nil {
			return fmt.Errorf("replay %s: %w", logName(s.dir, n), err)
		}
		s.man.NextFile = max(s.man.NextFile, n+1)
	}
	if s.mem.m.Len() > 0 {
		if err := s.flushMem(s.mem); err != nil {
			return err
		}
		s.mem = newMemtable()
	}
	if err := s.newLog(); err != nil {
		return err
	}
	return s.removeObsolete()
}

func (s *Store) newLog() error {
	num := s.man.NextFile
	s.man.NextFile++
	l, err := createWAL(s.dir, num)
	if err != nil {
		return err
	}
	old := s.log
	s.log = l
	s.man.LogNumber = num
	if err := writeManifest(s.dir, s.man); err != nil {
		return err
	}
	if old != nil {
		old.close()
	}
	return nil
}

// removeObsolete deletes tables and logs the manifest does not refer to
// (the remains of a crash during a flush or compaction).
func (s *Store) removeObsolete() error {
	live := map[uint64]bool{}
	for _, files := range s.man.Levels {
		for _, f := range files {
			live[f.Num] = true
		}
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	atomicfile.RemoveTemps(filepath.Join(s.dir, "MANIFEST")) // an interrupted manifest replacement
	for _, e := range entries {
		name := e.Name()
		var n uint64
		switch {
		case strings.HasSuffix(name, ".sst"):
			if _, err := fmt.Sscanf(name, "%06d.sst", &n); err == nil && !live[n] {
				os.Remove(filepath.Join(s.dir, name))
			}
		case strings.HasSuffix(name, ".log"):
			if _, err := fmt.Sscanf(name, "%06d.log", &n); err == nil && n < s.man.LogNumber {
				os.Remove(filepath.Join(s.dir, name))
			}
		}
	}
	return nil
}

// Apply writes a batch of keys and values (to the log, then the memtable)
// and flushes the memtable when it is full. Keys must be 16 bytes and
// outside every deleted range; on any error nothing of the batch is
// written.
func (s *Store) Apply(keys, values [][]byte) error {
	if len(keys) != len(values) {
		return fmt.Errorf("%d keys and %d values", len(keys), len(values))
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	for _, k := range keys {
		if len(k) != KeySize {
			return fmt.Errorf("%w (got %d bytes)", ErrKeySize, len(k))
		}
		if d, ok := s.deletedRange(k); ok {
			return fmt.Errorf("put %x: %w [%x, %x)", k, ErrDeleted, []byte(d.Start), []byte(d.End))
		}
	}
	if len(keys) == 0 {
		return nil // nothing to log: the log holds no empty records
	}
	if err := s.log.append(keys, values, s.o.Sync); err != nil {
		return fmt.Errorf("write-ahead log: %w", err)
	}
	for i := range keys {
		s.mem.put(keys[i], values[i])
	}
	if s.mem.size.Load() >= s.o.MemtableSize {
		return s.flushLocked()
	}
	return nil
}

func (s *Store) deletedRange(k []byte) (deletedRange, bool) {
	for _, d := range s.man.Deleted {
		if d.contains(k) {
			return d, true
		}
	}
	return deletedRange{}, false
}

// Flush writes the memtable to a level-0 table.
func (s *Store) Flush() error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	return s.flushLocked()
}

func (s *Store) flushLocked() error {
	if s.mem.m.Len() == 0 {
		return nil
	}
	// The memtable stays readable while it is written out: it is replaced
	// only when its table is installed.
	if err := s.flushMem(s.mem); err != nil {
		return err
	}
	s.mu.Lock()
	s.mem = newMemtable()
	s.mu.Unlock()
	if err := s.newLog(); err != nil {
		return err
	}
	if err := s.removeObsolete(); err != nil {
		return err
	}
	if !s.o.DisableAutoCompaction {
		return s.maybeCompact()
	}
	return nil
}

// flushMem writes mt to a new L0 table and installs it.
func (s *Store) flushMem(mt *memtable) error {
	num := s.allocFile()
	w, err := newTableWriter(tableName(s.dir, num), s.o.Table)
	if err != nil {
		return err
	}
	n := 0
	mt.m.All(func(k memKey, v *memValue) bool {
		if _, del := s.deletedRange(k[:]); del {
			return true
		}
		n++
		return w.add(k[:], *v.v.Load()) == nil
	})
	if n == 0 {
		w.abort()
		return nil
	}
	info, err := w.finish()
	if err != nil {
		return err
	}
	t, err := openTable(tableName(s.dir, num), num, s.o.Cache)
	if err != nil {
		return err
	}
	return s.install(nil, []*table{t}, []TableInfo{info}, 0)
}

func (s *Store) allocFile() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.man.NextFile
	s.man.NextFile++
	return n
}

// install replaces the tables `removed` with `added` at level lvl (added
// at level 0 are the newest), commits the manifest, then closes and
// deletes the removed tables.
func (s *Store) install(removed []*table, added []*table, infos []TableInfo, lvl int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, t := range added {
		t.info.Smallest, t.info.Largest = infos[i].Smallest, infos[i].Largest
	}
	gone := map[*table]bool{}
	for _, t := range removed {
		gone[t] = true
	}
	var next [numLevels][]*table
	for l := range s.levels {
		for _, t := range s.levels[l] {
			if !gone[t] {
				next[l] = append(next[l], t)
			}
		}
	}
	if lvl == 0 {
		next[0] = append(slices.Clone(added), next[0]...)
	} else {
		next[lvl] = append(next[lvl], added...)
		slices.SortFunc(next[lvl], func(a, b *table) int { return bytes.Compare(a.info.Smallest, b.info.Smallest) })
	}
	m := *s.man
	m.Levels = make([][]fileMeta, numLevels)
	for l := range next {
		m.Levels[l] = []fileMeta{}
		for _, t := range next[l] {
			m.Levels[l] = append(m.Levels[l], fileMeta{Num: t.num, Size: t.size, Keys: t.info.Keys,
				Smallest: t.info.Smallest, Largest: t.info.Largest})
		}
	}
	if crashBeforeCommit != nil && crashBeforeCommit() {
		// a test's simulated crash: the new tables are written and synced,
		// the manifest still names the old ones, and nothing is cleaned up
		return errSimulatedCrash
	}
	if err := writeManifest(s.dir, &m); err != nil {
		for _, t := range added {
			t.close()
			os.Remove(t.path)
		}
		return err
	}
	s.man, s.levels = &m, next
	for _, t := range removed {
		t.close()
		os.Remove(t.path)
	}
	s.checkVersion()
	return nil
}

// crashBeforeCommit, set by tests, makes install stop just before the
// manifest is replaced, as a crash there would.
var (
	crashBeforeCommit func() bool
	errSimulatedCrash = errors.New("simulated crash before the manifest commit")
)

// ErrNotFound is returned by Get and Floor when no key matches.
var ErrNotFound = errors.New("not found")

// Get returns the value of key. p, when not nil, accumulates the get's
// counters.
func (s *Store) Get(key []byte, p *Perf) ([]byte, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w (got %d bytes)", ErrKeySize, len(key))
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	if p != nil {
		p.Gets++
	}
	if d, ok := s.deletedRange(key); ok {
		return nil, fmt.Errorf("get %x: %w [%x, %x)", key, ErrDeleted, []byte(d.Start), []byte(d.End))
	}
	if v, ok := s.mem.get(key); ok {
		return v, nil
	}
	h := keyHash(key)
	for _, t := range s.levels[0] {
		if bytes.Compare(key, t.info.Smallest) < 0 || bytes.Compare(key, t.info.Largest) > 0 {
			continue
		}
		v, ok, err := t.lookup(key, h, p, true)
		if err != nil || ok {
			return v, err
		}
	}
	for l := 1; l < numLevels; l++ {
		ts := s.levels[l]
		i, _ := slices.BinarySearchFunc(ts, key, func(t *table, k []byte) int { return bytes.Compare(t.info.Largest, k) })
		if i == len(ts) || bytes.Compare(key, ts[i].info.Smallest) < 0 {
			continue
		}
		v, ok, err := ts[i].lookup(key, h, p, true)
		if err != nil || ok {
			return v, err
		}
	}
	return nil, ErrNotFound
}

// Floor returns the greatest live key ≤ key and its value.
func (s *Store) Floor(key []byte, p *Perf) (k, v []byte, err error) {
	if len(key) != KeySize {
		return nil, nil, fmt.Errorf("%w (got %d bytes)", ErrKeySize, len(key))
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, nil, ErrClosed
	}
	if p != nil {
		p.Gets++
	}
	target, inclusive := slices.Clone(key), true
	for {
		k, v, err := s.floorOnce(target, inclusive, p)
		if err != nil {
			return nil, nil, err
		}
		d, del := s.deletedRange(k)
		if !del {
			return k, v, nil
		}
		target, inclusive = slices.Clone([]byte(d.Start)), false // below the deleted range
	}
}

// floorOnce merges the floors of every source; the newest source wins a
// tie.
func (s *Store) floorOnce(key []byte, inclusive bool, p *Perf) (bk, bv []byte, err error) {
	consider := func(k, v []byte) {
		if bk == nil || bytes.Compare(k, bk) > 0 {
			bk, bv = k, v
		}
	}
	search := key
	if !inclusive {
		var ok bool
		if search, ok = predecessor(key); !ok {
			return nil, nil, ErrNotFound
		}
	}
	if k, v, ok := s.mem.floor(search); ok {
		consider(k, v)
	}
	for _, t := range s.levels[0] {
		k, v, ok, err := t.floor(search, true, p)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			consider(k, v)
		}
	}
	for l := 1; l < numLevels; l++ {
		ts := s.levels[l]
		// the last table whose smallest key is ≤ search
		i, _ := slices.BinarySearchFunc(ts, search, func(t *table, k []byte) int {
			if bytes.Compare(t.info.Smallest, k) <= 0 {
				return -1
			}
			return 1
		})
		if i == 0 {
			continue
		}
		k, v, ok, err := ts[i-1].floor(search, true, p)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			consider(k, v)
		}
	}
	if bk == nil {
		return nil, nil, ErrNotFound
	}
	return bk, bv, nil
}

// predecessor is the greatest 16-byte key below k.
func predecessor(k []byte) ([]byte, bool) {
	out := slices.Clone(k)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] > 0 {
			out[i]--
			return out, true
		}
		out[i] = 0xff
	}
	return nil, false
}

// DeleteRange deletes every key in [start, end): gets in it fail with
// ErrDeleted from now on, puts into it are refused, and compactions drop
// its keys. The deletion is durable when DeleteRange returns.
func (s *Store) DeleteRange(start, end []byte) error {
	if len(start) != KeySize || len(end) != KeySize {
		return ErrKeySize
	}
	if bytes.Compare(start, end) >= 0 {
		return fmt.Errorf("empty range [%x, %x)", start, end)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	m := *s.man
	m.Deleted = append(slices.Clone(m.Deleted), deletedRange{Start: slices.Clone(start), End: slices.Clone(end)})
	if err := writeManifest(s.dir, &m); err != nil {
		return err
	}
	s.man = &m
	return nil
}

// Close closes the log and the tables; the memtable's contents stay in
// the log and are recovered by the next Open.
func (s *Store) Close() error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.log != nil {
		err = s.log.close()
	}
	s.closeTables()
	return err
}

func (s *Store) closeTables() {
	for l := range s.levels {
		for _, t := range s.levels[l] {
			t.close()
		}
		s.levels[l] = nil
	}
}

// LevelInfo describes the tables of one level.
type LevelInfo struct {
	Level  int
	Tables []TableInfo
}

// Shape returns the tables of every non-empty level.
func (s *Store) Shape() []LevelInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []LevelInfo
	for l, ts := range s.levels {
		if len(ts) == 0 {
			continue
		}
		li := LevelInfo{Level: l}
		for _, t := range ts {
			li.Tables = append(li.Tables, t.info)
		}
		out = append(out, li)
	}
	return out
}

// Cache is the store's block cache.
func (s *Store) Cache() *BlockCache { return s.o.Cache }

func (s *Store) deletedRangeLocked(k []byte) (deletedRange, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.deletedRange(k)
}

func (s *Store) writable() error {
	if s.closed {
		return ErrClosed
	}
	if s.o.ReadOnly {
		return ErrReadOnly
	}
	return nil
}
