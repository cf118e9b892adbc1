package location

import (
	"fmt"
	"os"
)

// checkVersion, in builds with invariant checks (the race detector's,
// which tests use), asserts what a committed version promises: every table
// it lists exists on disk, no file number is listed twice, and every
// table's blocks are keyed by a cache-unique reader ID. A violation is a
// bug of the store, and panics.
func (s *Store) checkVersion() {
	if !invariants {
		return
	}
	seen := map[uint64]bool{}
	for lvl, tables := range s.levels {
		for _, t := range tables {
			if seen[t.num] {
				panic(fmt.Sprintf("location: invariant: table %d listed twice (level %d)", t.num, lvl))
			}
			seen[t.num] = true
			if _, err := os.Stat(t.path); err != nil {
				panic(fmt.Sprintf("location: invariant: level %d lists %s: %v", lvl, t.path, err))
			}
			if t.cache != nil && t.cacheID == 0 {
				panic(fmt.Sprintf("location: invariant: %s has no cache reader ID", t.path))
			}
		}
	}
}
