package engine

import (
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// TestReleaseParentCaches checks that a child drops the table renderer's
// width cache, and that widths are still measured without it.
func TestReleaseParentCaches(t *testing.T) {
	if _, capacity, _ := twwidth.GetCacheStats(); capacity == 0 {
		t.Fatal("the width cache is already off before the release: the test would prove nothing")
	}
	t.Cleanup(func() { twwidth.SetCacheCapacity(8192) }) // the package's own default
	releaseParentCaches()
	if _, capacity, _ := twwidth.GetCacheStats(); capacity != 0 {
		t.Fatalf("width cache capacity %d after the release, want 0", capacity)
	}
	if w := twwidth.Width("ops/s"); w != 5 {
		t.Fatalf("Width(\"ops/s\") = %d without the cache, want 5", w)
	}
}
