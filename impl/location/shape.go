package location

import (
	"bytes"
	"fmt"
	"os"
	"slices"
)

// Layer is one part of an LSM shape for Build: the next Keys keys of the
// write stream, sorted, written as tables of at most MaxKeysPerFile keys
// at Level. Layers go from the oldest data to the newest; a level above 0
// takes at most one layer (its tables must not overlap), level 0 any
// number (each layer one flush, newer than the previous).
type Layer struct {
	Level          int
	Keys           int
	MaxKeysPerFile int // 0: one table
}

// Build creates a store in o.Dir (which must not exist or be empty) whose
// tables have exactly the given shape, from a stream of keys in write
// order: the deterministic way to lay out the same LSM in both layouts
// for a benchmark. next returns the stream's keys and values; the stream
// must hold at least the layers' keys, and a key must not repeat.
func Build(o Options, layers []Layer, next func() (key, value []byte, ok bool)) error {
	if entries, err := os.ReadDir(o.Dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%w: %s", ErrNotEmpty, o.Dir)
	}
	o.CreateIfMissing, o.DisableAutoCompaction = true, true
	s, err := Open(o)
	if err != nil {
		return err
	}
	used := map[int]bool{}
	type kv struct{ k, v []byte }
	for _, ly := range layers {
		if ly.Level < 0 || ly.Level >= numLevels || ly.Keys <= 0 {
			s.Close()
			return fmt.Errorf("bad layer %+v", ly)
		}
		if ly.Level > 0 && used[ly.Level] {
			s.Close()
			return fmt.Errorf("level %d takes one layer", ly.Level)
		}
		used[ly.Level] = true
		buf := make([]kv, 0, ly.Keys)
		for range ly.Keys {
			k, v, ok := next()
			if !ok {
				s.Close()
				return fmt.Errorf("stream ended before layer %+v was full", ly)
			}
			if len(k) != KeySize {
				s.Close()
				return fmt.Errorf("%w (got %d bytes)", ErrKeySize, len(k))
			}
			buf = append(buf, kv{slices.Clone(k), slices.Clone(v)})
		}
		slices.SortFunc(buf, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
		per := ly.MaxKeysPerFile
		if per <= 0 {
			per = len(buf)
		}
		var outs []*table
		var infos []TableInfo
		for i := 0; i < len(buf); i += per {
			num := s.allocFile()
			w, err := newTableWriter(tableName(s.dir, num), s.o.Table)
			if err != nil {
				s.Close()
				return err
			}
			for _, e := range buf[i:min(i+per, len(buf))] {
				if err := w.add(e.k, e.v); err != nil {
					w.abort()
					s.Close()
					return err
				}
			}
			info, err := w.finish()
			if err != nil {
				s.Close()
				return err
			}
			t, err := openTable(tableName(s.dir, num), num, s.o.Cache)
			if err != nil {
				s.Close()
				return err
			}
			outs, infos = append(outs, t), append(infos, info)
		}
		if err := s.install(nil, outs, infos, ly.Level); err != nil {
			s.Close()
			return err
		}
	}
	return s.Close()
}
