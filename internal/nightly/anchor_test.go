package nightly

import (
	"os"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
)

// TestAnchorIsBuiltOnce: a night builds its anchor into the build cache,
// and the next night against the same anchor takes it from there; with
// no cache ("off") every night builds it.
func TestAnchorIsBuiltOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a revision")
	}
	a := newAlarm(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a.n.o.Anchor, a.n.o.Registry = a.c[0], harness.Default
	for _, tc := range []struct {
		cache         string
		built, before int
	}{{a.n.o.BuildCache, 1, 1}, {"off", 2, 0}} {
		a.n.o.BuildCache = tc.cache
		a.stderr.Reset()
		for range 2 {
			set, cleanup, err := a.n.sides(t.Context(), a.s, a.c[4], exe)
			if err != nil {
				t.Fatalf("--build-cache %s: %v\n%s", tc.cache, err, a.stderr)
			}
			cleanup()
			if len(set.Cases) != 1 || len(set.Notes) != 0 {
				t.Fatalf("--build-cache %s: cases %v, notes %q", tc.cache, set.Cases, set.Notes)
			}
		}
		out := a.stderr.String()
		if built, before := strings.Count(out, "building baseline"), strings.Count(out, "built before"); built != tc.built || before != tc.before {
			t.Errorf("two nights with --build-cache %s: the anchor built %d times and taken from the cache %d, want %d and %d:\n%s", tc.cache, built, before, tc.built, tc.before, out)
		}
	}
}
