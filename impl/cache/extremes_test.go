package cache

import (
	"math"
	"slices"
	"testing"
)

// TestRangeAtInt64Extremes: GetRange and ForEachInRange accept every range
// the API accepts, at every extreme of int64, in both implementations,
// and return the same entries.
func TestRangeAtInt64Extremes(t *testing.T) {
	forEach(t, func(t *testing.T, im impl) {
		c := im.new(NewRemovalQueue(5, false))
		for _, e := range []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, 63, 64, math.MaxInt64 - 1, math.MaxInt64} {
			mustPut(t, c, 7, e, "x")
		}
		for _, r := range [][2]int64{
			{math.MinInt64, math.MaxInt64}, {0, math.MaxInt64}, {-1, math.MaxInt64}, {math.MinInt64, 0},
			{math.MaxInt64, math.MaxInt64}, {math.MinInt64, math.MinInt64}, {1, math.MaxInt64 - 1},
		} {
			first, last := Position{7, r[0]}, Position{7, r[1]}
			got := ids(c.GetRange(first, last))
			var want []string
			c.ForEachInRange(first, last, func(e *Entry) {
				if err := e.Retain(); err != nil {
					t.Fatal(err)
				}
				want = append(want, ids([]*Entry{e})...) // ids releases
			})
			if !slices.Equal(got, want) || len(got) == 0 {
				t.Errorf("[%d, %d]: GetRange %v, ForEachInRange %v", r[0], r[1], got, want)
			}
		}
	})
}
