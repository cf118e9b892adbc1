package explain

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ledgerbench/ledgerbench/harness/result"
	lbprofile "github.com/ledgerbench/ledgerbench/internal/profile"
)

// AllocsFloor and AllocsShare bound the allocation change CompareAllocs
// names: a function's allocations per op must change by at least
// AllocsFloor and by at least AllocsShare of the baseline's whole. Every
// allocation is recorded (a profile rate of 1), so counts need no
// interval; but what amortizes over ops (a slice that grows, a pool that
// the collector empties) differs from window to window by a few
// hundredths of an allocation an op.
const (
	AllocsFloor = 0.05
	AllocsShare = 0.05
)

// Allocated is one side's allocations per op, by function: objects and
// bytes allocated in the function itself (flat: the innermost frame of
// the allocation's stack, as pprof attributes), and with its callees.
type Allocated struct {
	Objects, Bytes          float64
	FlatObjects, CumObjects map[string]float64
	FlatBytes               map[string]float64
}

// CountAllocs reads one side's allocation profiling fork: its profile's
// allocations divided by the ops of its window.
func CountAllocs(pr result.ProfileRun) (*Allocated, error) {
	if pr.Err != nil {
		return nil, fmt.Errorf("the allocation profiling fork failed: %v", pr.Err)
	}
	if pr.Ops <= 0 {
		return nil, fmt.Errorf("the allocation profiling fork measured no op (%s)", pr.Path)
	}
	p, err := lbprofile.Read(pr.Path)
	if err != nil {
		return nil, err
	}
	objs, bytes := -1, -1
	for i, st := range p.SampleType {
		switch st.Type {
		case "alloc_objects":
			objs = i
		case "alloc_space":
			bytes = i
		}
	}
	if objs < 0 || bytes < 0 {
		return nil, fmt.Errorf("%s: not an allocation profile: its sample types are %v", pr.Path, p.SampleType)
	}
	a := &Allocated{FlatObjects: map[string]float64{}, CumObjects: map[string]float64{}, FlatBytes: map[string]float64{}}
	ops := float64(pr.Ops)
	for _, s := range p.Sample {
		o, b := float64(s.Value[objs])/ops, float64(s.Value[bytes])/ops
		a.Objects, a.Bytes = a.Objects+o, a.Bytes+b
		names := stack(s)
		if len(names) == 0 {
			continue
		}
		a.FlatObjects[names[0]] += o
		a.FlatBytes[names[0]] += b
		for j, n := range names {
			if !slices.Contains(names[:j], n) {
				a.CumObjects[n] += o
			}
		}
	}
	return a, nil
}

// AllocFunction is one function's allocations per op on each side and
// their change.
type AllocFunction struct {
	Name       string  `json:"name"`
	BaseObjs   float64 `json:"base_flat_allocs_per_op"`
	ExpObjs    float64 `json:"experiment_flat_allocs_per_op"`
	Objects    float64 `json:"flat_allocs_change"`
	Bytes      float64 `json:"flat_bytes_change"`
	CumObjects float64 `json:"cum_allocs_change"`
	Named      bool    `json:"named"`
}

// AllocsReport is the function-level change of one case's allocations
// per op between two sides.
type AllocsReport struct {
	BaseObjects float64         `json:"base_allocs_per_op"`
	ExpObjects  float64         `json:"experiment_allocs_per_op"`
	BaseBytes   float64         `json:"base_bytes_per_op"`
	ExpBytes    float64         `json:"experiment_bytes_per_op"`
	Functions   []AllocFunction `json:"functions"`
}

// CompareAllocs compares two sides' allocations per op: a function is
// named when its flat allocations per op changed by at least AllocsFloor
// and AllocsShare of the baseline's.
func CompareAllocs(base, exp *Allocated) *AllocsReport {
	r := &AllocsReport{BaseObjects: base.Objects, ExpObjects: exp.Objects, BaseBytes: base.Bytes, ExpBytes: exp.Bytes}
	floor := max(AllocsFloor, AllocsShare*base.Objects)
	for _, n := range sortedKeys(base.CumObjects, exp.CumObjects) {
		f := AllocFunction{Name: n, BaseObjs: base.FlatObjects[n], ExpObjs: exp.FlatObjects[n],
			Bytes: exp.FlatBytes[n] - base.FlatBytes[n], CumObjects: exp.CumObjects[n] - base.CumObjects[n]}
		f.Objects = f.ExpObjs - f.BaseObjs
		f.Named = math.Abs(f.Objects) >= floor
		r.Functions = append(r.Functions, f)
	}
	namedFirst(r.Functions, func(f AllocFunction) bool { return f.Named }, func(x, y AllocFunction) int {
		return cmp.Or(cmp.Compare(math.Abs(y.Objects), math.Abs(x.Objects)), cmp.Compare(math.Abs(y.Bytes), math.Abs(x.Bytes)))
	})
	return r
}

// Named are the report's named functions, the largest change first.
func (r *AllocsReport) Named() []AllocFunction {
	return named(r.Functions, func(f AllocFunction) bool { return f.Named })
}

// Line is the report's top named functions, at most top, on one line:
// "tiny.parse +1.000 allocs/op +64.00 B/op"; "" when none is named.
func (r *AllocsReport) Line(top int) string {
	var parts []string
	for _, f := range r.Named() {
		if len(parts) == top {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %+.3f allocs/op %s", ShortName(f.Name), f.Objects, signedBytes(f.Bytes)))
	}
	return strings.Join(parts, "; ")
}

// signedBytes is bytes per op with its sign: "+24.00 B/op".
func signedBytes(b float64) string { return fmt.Sprintf("%+.2f B/op", b) }

// WriteText writes the report: both sides' allocations per op and every
// function whose allocations changed, at most top.
func (r *AllocsReport) WriteText(w io.Writer, top int) error {
	fmt.Fprintf(w, "allocations per op (every allocation recorded): baseline %.3f allocs/op %.2f B/op, experiment %.3f allocs/op %.2f B/op\n",
		r.BaseObjects, r.BaseBytes, r.ExpObjects, r.ExpBytes)
	fmt.Fprintf(w, "%d functions named (flat change at least %g allocs/op and %g %% of the baseline's)\n\n", len(r.Named()), AllocsFloor, 100*AllocsShare)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "function\tbaseline flat allocs/op\texperiment flat allocs/op\tflat change\tbytes change\tcum change\tnamed")
	rows := 0
	for _, f := range r.Functions {
		if rows == top {
			break
		}
		if f.Objects == 0 && f.Bytes == 0 && f.CumObjects == 0 {
			continue
		}
		rows++
		named := ""
		if f.Named {
			named = "yes"
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%+.3f\t%s\t%+.3f\t%s\n", ShortName(f.Name), f.BaseObjs, f.ExpObjs, f.Objects, signedBytes(f.Bytes), f.CumObjects, named)
	}
	return tw.Flush()
}
