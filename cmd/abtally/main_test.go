package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/compare"
)

// abFile is an A/B file of one benchmark whose rounds have the given
// levels on each side.
func abFile(t *testing.T, base, exp []float64) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("pkg: x\n\n")
	for s, side := range []string{"baseline", "experiment"} {
		fmt.Fprintf(&b, "toolchain: %s\n\n", side)
		for k, v := range [][]float64{base, exp}[s] {
			fmt.Fprintf(&b, "BenchmarkW-2 10000 %g ns/op\n# benchctl: fork=%d iter=0 mode=avgt\n", v, k+1)
		}
		b.WriteString("\n")
	}
	p := filepath.Join(t.TempDir(), "ab.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCount: a file whose rounds' ratios cross 1 is unknown (paired by
// rank it looked exactly the same); one 2× slower in every round is
// changed, slower; one identical to the last digit is same.
func TestCount(t *testing.T) {
	var up, down, slow []float64
	for k := 1; k <= 10; k++ {
		up, down = append(up, float64(9000+1000*k)), append(down, float64(20000-1000*k))
		slow = append(slow, float64(2*(9000+1000*k)+k))
	}
	files := []string{abFile(t, up, down), abFile(t, up, slow), abFile(t, up, up)}
	rows, withChange, err := count(files, compare.ABOptions(0.05, compare.DefaultMinChange))
	if err != nil {
		t.Fatal(err)
	}
	r := rows["W-2"]
	if r == nil || r.files != 3 || r.changed != 1 || r.slower != 1 || r.unknown != 1 || r.same != 1 || withChange != 1 {
		t.Errorf("tally %+v, withChange %d; want 3 files: 1 changed (slower), 1 unknown, 1 same", r, withChange)
	}
}
