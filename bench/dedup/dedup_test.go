package dedup

import (
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/harnesstest"
)

func BenchmarkDedupSingle(b *testing.B)   { harness.RunDefault(b, Family+"/DedupSingle") }
func BenchmarkDedupDistinct(b *testing.B) { harness.RunDefault(b, Family+"/DedupDistinct") }
func BenchmarkDedupShared(b *testing.B)   { harness.RunDefault(b, Family+"/DedupShared") }
func BenchmarkDedupNoop(b *testing.B)     { harness.RunDefault(b, Family+"/DedupNoop") }
func BenchmarkDedupFloor(b *testing.B)    { harness.RunDefault(b, Family+"/DedupFloor") }

// TestFamilyRuns runs every case briefly in process and checks what the
// bodies did: single and distinct producers accept every call, the shared
// producer accepts some, and the atomic implementation allocates nothing.
// The iteration's count is the process's, so it holds the harness's own
// few (a waiting goroutine's first sleep allocates its timer, which a
// loaded host reaches): the bound is one allocation per hundred ops, far
// below the one per op of a path that allocates.
func TestFamilyRuns(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "dedup", Measure: result.IterSpec{Count: 1, Ops: 2000}})
	if len(cases) != 3*6+2 {
		t.Fatalf("%d cases, want 20", len(cases))
	}
	for _, c := range cases {
		it := c.Iterations[0]
		acc, has := it.Total.Metrics["accepted/op"]
		name := c.Case.Name()
		switch strings.TrimPrefix(c.Case.Benchmark, "Benchmark") {
		case "DedupSingle", "DedupDistinct":
			if acc != 1 {
				t.Errorf("%s: accepted/op = %v, want 1", name, acc)
			}
		case "DedupShared":
			if !has || acc <= 0 || acc > 1 {
				t.Errorf("%s: accepted/op = %v, want in (0, 1]", name, acc)
			}
		}
		if impl, _ := c.Case.Params.Get("impl"); impl == "atomic" && it.Allocs*100 > uint64(it.Executed) {
			t.Errorf("%s: %d allocations in %d ops, want none beyond the harness's few", name, it.Allocs, it.Executed)
		}
	}
}
