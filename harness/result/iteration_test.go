package result

import "testing"

// TestAllocationResolution: a timed iteration whose allocations are
// within the runtime's background reads as zero per op (it used to read
// 1.287e-07 B/op), an iteration above it reads exactly, and a counted
// iteration is always exact.
func TestAllocationResolution(t *testing.T) {
	for _, tc := range []struct {
		it                 Iteration
		bytes, allocs, gcs float64
	}{
		{Iteration{Executed: 8_000_000, AllocBytes: 1030, Allocs: 3, GCs: 1}, 0, 0, 0},
		{Iteration{Executed: 8_000_000, AllocBytes: 64 << 20, Allocs: 1 << 20, GCs: 4}, 64 << 20 / 8e6, 1 << 20 / 8e6, 4 / 8e6},
		{Iteration{Executed: 1000, AllocBytes: 1000, Allocs: 10, Counted: true}, 1, 0.01, 0},
	} {
		it := tc.it
		if it.BytesPerOp() != tc.bytes || it.AllocsPerOp() != tc.allocs || it.GCsPerOp() != tc.gcs {
			t.Errorf("%+v: %g B/op, %g allocs/op, %g gc/op; want %g, %g, %g", it, it.BytesPerOp(), it.AllocsPerOp(), it.GCsPerOp(), tc.bytes, tc.allocs, tc.gcs)
		}
	}
}

func TestBackgroundExcessReadsAsTheWholeNumber(t *testing.T) {
	// 10 million ops of 64 bytes, plus 3 KiB of background: 64.0003 B/op.
	it := Iteration{Executed: 10_000_000, AllocBytes: 64*10_000_000 + 3<<10, Allocs: 10_000_000 + 20}
	if b, a := it.BytesPerOp(), it.AllocsPerOp(); b != 64 || a != 1 {
		t.Errorf("BytesPerOp %v, AllocsPerOp %v; want 64 and 1", b, a)
	}
	// A real fraction (an amortized growth: 0.5 B/op) is beyond the
	// background's share and stays.
	it.AllocBytes = 64*10_000_000 + 5_000_000
	if b := it.BytesPerOp(); b != 64.5 {
		t.Errorf("BytesPerOp %v, want 64.5", b)
	}
	// Counted iterations are exact.
	it = Iteration{Executed: 1000, Counted: true, AllocBytes: 64*1000 + 3}
	if b := it.BytesPerOp(); b != 64.003 {
		t.Errorf("counted BytesPerOp %v, want 64.003", b)
	}
}
