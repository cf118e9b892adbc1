package profile

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is a profiler name as given to --prof.
type Kind string

const (
	CPU          Kind = "cpu"
	OffCPU       Kind = "offcpu"
	Block        Kind = "block"
	Mutex        Kind = "mutex"
	Allocs       Kind = "allocs"
	Instructions Kind = "instructions"
	Perf         Kind = "perf"
)

// Kinds lists every profiler.
var Kinds = []Kind{CPU, OffCPU, Block, Mutex, Allocs, Instructions, Perf}

// InProcess reports whether k runs inside the fork (else it wraps it).
func (k Kind) InProcess() bool {
	return k == CPU || k == OffCPU || k == Block || k == Mutex || k == Allocs
}

// Cumulative reports whether k's profile is the difference of the
// runtime's cumulative profile at the start and the end of the
// measurement iterations (block, mutex, allocs). Such a profile holds every
// op run between the two, the workers' ramps outside their timed windows
// included, and is divided by every op executed, not by the measured ones.
func (k Kind) Cumulative() bool {
	return k == Block || k == Mutex || k == Allocs
}

// ParseKinds parses a comma-separated --prof list.
func ParseKinds(list string) ([]Kind, error) {
	var out []Kind
	for s := range strings.SplitSeq(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		k := Kind(s)
		if !slices.Contains(Kinds, k) {
			names := make([]string, len(Kinds))
			for i, k := range Kinds {
				names[i] = string(k)
			}
			return nil, fmt.Errorf("unknown profiler %q (valid: %s)", s, strings.Join(names, ", "))
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}
