package verdict

import (
	"math"
	"sort"
)

// BH is the Benjamini–Hochberg procedure at false-discovery rate q over
// the p-values ps: it returns each one's adjusted value (the smallest q
// at which it would be rejected) and whether it is rejected at q. A NaN
// p-value is no test: it is not counted among the family and never
// rejected (its adjusted value is NaN).
func BH(ps []float64, q float64) (adjusted []float64, rejected []bool) {
	adjusted = make([]float64, len(ps))
	rejected = make([]bool, len(ps))
	var idx []int
	for i, p := range ps {
		adjusted[i] = math.NaN()
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(x, y int) bool { return ps[idx[x]] < ps[idx[y]] })
	m := float64(len(idx))
	next := 1.0 // the running minimum from the largest p down
	for k := len(idx) - 1; k >= 0; k-- {
		i := idx[k]
		next = math.Min(next, ps[i]*m/float64(k+1))
		adjusted[i] = next
		rejected[i] = next <= q
	}
	return adjusted, rejected
}
