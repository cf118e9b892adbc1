package engine

import "github.com/olekukonko/tablewriter/pkg/twwidth"

// releaseParentCaches drops what package initialization built for the
// parent's work and a fork child never uses, before the child measures
// anything. A child is the whole program, so every package's init has
// run in it, and whatever those inits keep alive is marked by each of the
// child's garbage collections: with a live heap of 1.8 MB of the parent's
// (where `go test` of the same benchmark holds almost none), a benchmark
// that allocates collects more often and marks more each time than the
// same code under `go test`. The largest such piece is the table
// renderer's width cache, a map sized for 8,192 strings at init (641 KB
// of the 1.8 MB); the child renders no tables, and with its capacity at 0
// the renderer measures widths uncached if it ever does.
func releaseParentCaches() {
	twwidth.SetCacheCapacity(0)
}
