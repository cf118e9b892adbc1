package explain

import (
	"maps"
	"slices"
)

// namedFirst sorts a report's functions: the named first, each group
// in the order by gives (the largest change first), stably.
func namedFirst[F any](fs []F, isNamed func(F) bool, by func(x, y F) int) {
	slices.SortStableFunc(fs, func(x, y F) int {
		if nx, ny := isNamed(x), isNamed(y); nx != ny {
			if nx {
				return -1
			}
			return 1
		}
		return by(x, y)
	})
}

// named are a report's named functions, in its order.
func named[F any](fs []F, isNamed func(F) bool) []F {
	var out []F
	for _, f := range fs {
		if isNamed(f) {
			out = append(out, f)
		}
	}
	return out
}

// sortedKeys are the keys of any of ms, sorted.
func sortedKeys[V any](ms ...map[string]V) []string {
	seen := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			seen[k] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
