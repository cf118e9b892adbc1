package explain

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// allocProfile writes an allocation profile of the synthetic program's
// stacks (frames) whose leaves allocated objs objects of size bytes each,
// and returns its path.
func allocProfile(t *testing.T, objs map[string]int64, size int64) string {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     1,
	}
	fns := map[string]*profile.Function{}
	for leaf, n := range objs {
		var locs []*profile.Location
		for _, lines := range frames[leaf] {
			l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: uint64(0x1000 * (len(p.Location) + 1))}
			for _, name := range lines {
				f := fns[name]
				if f == nil {
					f = &profile.Function{ID: uint64(len(fns) + 1), Name: name}
					fns[name] = f
					p.Function = append(p.Function, f)
				}
				l.Line = append(l.Line, profile.Line{Function: f})
			}
			p.Location = append(p.Location, l)
			locs = append(locs, l)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{n, n * size, 0, 0}})
	}
	path := filepath.Join(t.TempDir(), "allocs.pb.gz")
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCompareAllocsKnownAnswers: over 1000 ops, main.small (inlined into
// main.caller) allocates one more object an op of 32 bytes; main.hot's
// 10 more objects in 1000 ops (0.01 an op) are under the floor; an A/A
// names nothing.
func TestCompareAllocsKnownAnswers(t *testing.T) {
	base, err := CountAllocs(result.ProfileRun{Kind: "allocs", Ops: 1000, Path: allocProfile(t, map[string]int64{"main.hot": 2000, "main.small": 1000}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := CountAllocs(result.ProfileRun{Kind: "allocs", Ops: 1000, Path: allocProfile(t, map[string]int64{"main.hot": 2010, "main.small": 2000}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	if base.Objects != 3 || base.Bytes != 96 || base.FlatObjects["main.small"] != 1 || base.CumObjects["main.caller"] != 1 || base.CumObjects["main.run"] != 3 {
		t.Fatalf("baseline counted %+v", base)
	}
	r := CompareAllocs(base, exp)
	named := r.Named()
	if len(named) != 1 || named[0].Name != "main.small" || named[0].Objects != 1 || named[0].Bytes != 32 {
		t.Fatalf("named %+v, want main.small alone, +1 alloc/op +32 B/op", named)
	}
	if l := r.Line(3); l != "main.small +1.000 allocs/op +32.00 B/op" {
		t.Errorf("line %q", l)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text, 10); err != nil || !strings.Contains(text.String(), "main.hot") {
		t.Errorf("the text report (%v) lacks main.hot's change:\n%s", err, text.String())
	}
	if r := CompareAllocs(base, base); len(r.Named()) != 0 {
		t.Errorf("A/A named %+v", r.Named())
	}
	if _, err := CountAllocs(result.ProfileRun{Kind: "allocs", Ops: 0, Path: "x"}); err == nil {
		t.Error("a fork of no op, and no error")
	}
	cpu := result.ProfileRun{Kind: "allocs", Ops: 10, Path: filepath.Join(t.TempDir(), "cpu.pb.gz")}
	var b bytes.Buffer
	synth(rand.New(rand.NewPCG(1, 2)), map[string]float64{"main.hot": 1e7}, 1, 0).Profile.Write(&b)
	os.WriteFile(cpu.Path, b.Bytes(), 0o644)
	if _, err := CountAllocs(cpu); err == nil || !strings.Contains(err.Error(), "not an allocation profile") {
		t.Errorf("a CPU profile read as allocations: %v", err)
	}
}
