package engine_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/harnesstest"
)

var paramBench = harnesstest.ParamBench

func names(cases []engine.Case) []string {
	var out []string
	for _, c := range cases {
		out = append(out, c.Name())
	}
	return out
}

func TestOverrides(t *testing.T) {
	b := paramBench()
	o := engine.Overrides{}
	if err := o.Add("cachedEntries=10, 20,10"); err != nil {
		t.Fatal(err)
	}
	cases, err := engine.Cases([]*harness.Benchmark{b}, regexp.MustCompile("impl=paged"), o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"BenchmarkParams/impl=paged/cachedEntries=10", "BenchmarkParams/impl=paged/cachedEntries=20"}
	if got := names(cases); !slices.Equal(got, want) {
		t.Errorf("cases\n got %q\nwant %q", got, want)
	}
}

func TestBadParams(t *testing.T) {
	b := paramBench()
	for _, tc := range []struct {
		flag, want string
	}{
		{"nosuch=1", `params "nosuch": unknown parameter (parameters of the selected benchmarks: cachedEntries, impl)`},
		{"cachedEntries=ten", `parameter cachedEntries: value "ten" is not a valid int`},
		{"impl=btree", `parameter impl: unknown value "btree" (valid: skiplist, paged)`},
	} {
		o := engine.Overrides{}
		if err := o.Add(tc.flag); err != nil {
			t.Fatalf("Add(%q): %v", tc.flag, err)
		}
		_, err := engine.Cases([]*harness.Benchmark{b}, nil, o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-p %s: err = %v, want it to contain %q", tc.flag, err, tc.want)
		}
	}
	for _, bad := range []string{"", "=1", "a", "a=", "a=1,,2", "a/b=1", "a=1", "a=2"} {
		o := engine.Overrides{"a": {"0"}}
		if err := o.Add(bad); err == nil {
			t.Errorf("Add(%q) accepted a malformed or repeated parameter", bad)
		}
	}
}

func FuzzParseOverride(f *testing.F) {
	for _, s := range []string{"impl=paged", "n=1,2,3", "a= x , y", "=", "a=b=c", ",", "a=,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, values, err := engine.ParseOverride(s)
		if err != nil {
			return
		}
		if name == "" || len(values) == 0 {
			t.Fatalf("ParseOverride(%q) = %q, %q: empty result without error", s, name, values)
		}
		again := name + "=" + strings.Join(values, ",")
		n2, v2, err := engine.ParseOverride(again)
		if err != nil || n2 != name || !slices.Equal(v2, values) {
			t.Fatalf("round trip of %q via %q: %q %q %v", s, again, n2, v2, err)
		}
	})
}

func TestIterSpec(t *testing.T) {
	def := result.IterSpec{Count: 5, Time: 1e9}
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"3x1s", "3x1s"}, {"5x200ms", "5x200ms"}, {"5x1000ops", "5x1000ops"}, {"7", "7x1s"}, {"0", "0x1s"},
	} {
		got, err := result.ParseIterSpec(tc.in, def)
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseIterSpec(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "x1s", "-1x1s", "3x", "3x0s", "3x-1s", "3xfoo", "3x0ops", "3x-5ops", "ax1s", "3x1.5ops"} {
		if _, err := result.ParseIterSpec(bad, def); err == nil {
			t.Errorf("ParseIterSpec(%q) accepted a malformed spec", bad)
		}
	}
}

// TestIterSpecSaysWhatIsWrong: a duration too long to represent is named
// as such, not as one that is not positive.
func TestIterSpecSaysWhatIsWrong(t *testing.T) {
	for in, want := range map[string]string{
		"3x9999999h": "too long: the longest iteration time is 2562047h",
		"3x-1s":      "must be a positive duration",
		"3xfoo":      "must be a positive duration",
	} {
		if _, err := result.ParseIterSpec(in, result.IterSpec{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseIterSpec(%q): %v, want %q", in, err, want)
		}
	}
}

func FuzzParseIterSpec(f *testing.F) {
	for _, s := range []string{"3x1s", "5x1000ops", "2", "1x1h2m", "0x5ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := result.ParseIterSpec(s, result.IterSpec{Count: 1, Time: 1e9})
		if err != nil {
			return
		}
		back, err := result.ParseIterSpec(spec.String(), result.IterSpec{})
		if err != nil || back != spec {
			t.Fatalf("round trip %q → %v → %q → %v, %v", s, spec, spec.String(), back, err)
		}
	})
}

func TestRegistrySelect(t *testing.T) {
	r := &harness.Registry{}
	r.Register(paramBench())
	if _, err := engine.Select(r, "nosuite", nil); err == nil || !strings.Contains(err.Error(), "unknown suite (suites: x, all)") {
		t.Errorf("unknown suite: %v", err)
	}
	if _, err := engine.Select(&harness.Registry{}, "all", nil); err == nil || !strings.Contains(err.Error(), "no benchmark is registered") {
		t.Errorf("empty registry: %v", err)
	}
	if _, err := engine.Select(r, "all", regexp.MustCompile("Nothing")); err == nil || !strings.Contains(err.Error(), "BenchmarkParams") {
		t.Errorf("unmatched --bench: %v", err)
	}
	if got, err := engine.Select(r, "all", regexp.MustCompile("cachedEntries=100000")); err != nil || len(got) != 1 {
		t.Errorf("--bench on a parameter point: %v, %v", got, err)
	}
}

// TestQuickValues: a quick run plans a parameter's Quick values unless
// the run sets the parameter; other runs plan its Values.
func TestQuickValues(t *testing.T) {
	b := paramBench()
	b.Params[1].Quick = []string{"100"}
	r := &harness.Registry{}
	r.Register(b)
	for _, tc := range []struct {
		quick bool
		set   string
		want  []string
	}{
		{false, "", []string{"BenchmarkParams/impl=skiplist/cachedEntries=1000", "BenchmarkParams/impl=skiplist/cachedEntries=100000",
			"BenchmarkParams/impl=paged/cachedEntries=1000", "BenchmarkParams/impl=paged/cachedEntries=100000"}},
		{true, "", []string{"BenchmarkParams/impl=skiplist/cachedEntries=100", "BenchmarkParams/impl=paged/cachedEntries=100"}},
		{true, "cachedEntries=7", []string{"BenchmarkParams/impl=skiplist/cachedEntries=7", "BenchmarkParams/impl=paged/cachedEntries=7"}},
	} {
		o := engine.DefaultOptions()
		if tc.quick {
			o = engine.QuickOptions()
		}
		o.Suite = "x"
		if tc.set != "" {
			o.Params = engine.Overrides{}
			if err := o.Params.Add(tc.set); err != nil {
				t.Fatal(err)
			}
		}
		cases, err := o.Plan(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(cases); !slices.Equal(got, tc.want) {
			t.Errorf("quick %v, -p %q: %q, want %q", tc.quick, tc.set, got, tc.want)
		}
	}
}
