package profile

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// Entry is one frame of a summary with its cost per op.
type Entry struct {
	Frame string
	// Value is the frame's cost per op in the summary's Unit; Count is
	// the frame's events per op (contentions, objects) where the profile
	// counts them; Share is the frame's fraction of the profile's total.
	Value float64
	Count float64
	Share float64
}

// Summary is the top of one profile, normalized per measured op.
type Summary struct {
	Kind  Kind
	Path  string
	Ops   int64
	Unit  string  // unit of Value: "ns/op" (cpu, offcpu, block, mutex) or "B/op" (allocs)
	Total float64 // sum over all frames, per op
	// TotalSeconds (or bytes for allocs) is the whole window's total.
	TotalRaw float64
	Top      []Entry
}

// TopN is how many frames a summary keeps.
const TopN = 8

// frameOf picks the frame a sample is charged to: the leaf for cpu and
// allocs; for waits, the first frame outside the runtime and sync
// packages, that is the code that waited.
func frameOf(k Kind, s *profile.Sample) string {
	// Leaf first: locations run from the leaf to the root, and a
	// location's lines from the innermost inlined function outwards.
	var names []string
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil {
				names = append(names, l.Function.Name)
			}
		}
	}
	if len(names) == 0 {
		return "?"
	}
	if k == CPU {
		return names[0]
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "runtime.") && !strings.HasPrefix(n, "sync.") &&
			!strings.HasPrefix(n, "internal/") && !strings.HasPrefix(n, "sync/atomic.") &&
			!strings.HasPrefix(n, "github.com/felixge/fgprof") {
			return n
		}
	}
	return names[0]
}

// valueIndex returns the sample value indexes of the cost and the count.
func valueIndex(k Kind, p *profile.Profile) (cost, count int, unit string, err error) {
	find := func(typ string) int {
		for i, st := range p.SampleType {
			if st.Type == typ {
				return i
			}
		}
		return -1
	}
	switch k {
	case CPU:
		cost, count, unit = find("cpu"), find("samples"), "ns/op"
	case OffCPU:
		cost, count, unit = find("time"), find("samples"), "ns/op"
	case Block, Mutex:
		cost, count, unit = find("delay"), find("contentions"), "ns/op"
	case Allocs:
		cost, count, unit = find("alloc_space"), find("alloc_objects"), "B/op"
	default:
		return 0, 0, "", fmt.Errorf("no summary for %s profiles", k)
	}
	if cost < 0 {
		return 0, 0, "", fmt.Errorf("%s profile has no cost sample type (has %v)", k, p.SampleType)
	}
	return cost, count, unit, nil
}

// Read parses a profile file; its errors name the file.
func Read(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Summarize reads a profile file and returns its top frames per op, where
// ops is the number of ops measured in the window the profile covers.
func Summarize(path string, k Kind, ops int64) (*Summary, error) {
	p, err := Read(path)
	if err != nil {
		return nil, err
	}
	cost, count, unit, err := valueIndex(k, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	byFrame := map[string]*Entry{}
	var total float64
	for _, s := range p.Sample {
		e := byFrame[frameOf(k, s)]
		if e == nil {
			e = &Entry{Frame: frameOf(k, s)}
			byFrame[e.Frame] = e
		}
		v := float64(s.Value[cost])
		e.Value += v
		total += v
		if count >= 0 {
			e.Count += float64(s.Value[count])
		}
	}
	per := float64(max(ops, 1))
	sum := &Summary{Kind: k, Path: path, Ops: ops, Unit: unit, Total: total / per, TotalRaw: total}
	for _, e := range byFrame {
		if total > 0 {
			e.Share = e.Value / total
		}
		e.Value /= per
		e.Count /= per
		sum.Top = append(sum.Top, *e)
	}
	sort.Slice(sum.Top, func(i, j int) bool {
		if sum.Top[i].Value != sum.Top[j].Value {
			return sum.Top[i].Value > sum.Top[j].Value
		}
		return sum.Top[i].Frame < sum.Top[j].Frame
	})
	if len(sum.Top) > TopN {
		sum.Top = sum.Top[:TopN]
	}
	return sum, nil
}
