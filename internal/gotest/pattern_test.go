package gotest

import (
	"slices"
	"testing"
)

func TestPatternMatchesAsGoTest(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		name    string
		want    bool
	}{
		{"", "BenchmarkA/x", true},
		{"A", "BenchmarkA/x", true},
		{"^BenchmarkA$", "BenchmarkAB", false},
		{"A/x", "BenchmarkA/x/deeper", true},
		{"A/y", "BenchmarkA/x", false},
		{"A/x", "BenchmarkA", false}, // only partly: go test runs it to find A/x and reports no result of it
		{"Z|A/x", "BenchmarkA/x", true},
		{"Z|A/x", "BenchmarkA/y", false},
		{"[A/]/x", "BenchmarkA/x", true}, // the slash in a class belongs to its element
		{"(A|C)/x", "BenchmarkC/x", true},
	} {
		p, err := Split(tc.pattern)
		if err != nil {
			t.Fatalf("Split(%q): %v", tc.pattern, err)
		}
		if got := p.Match(tc.name); got != tc.want {
			t.Errorf("Split(%q).Match(%q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
	if got := split(`A\/b/c`, '/'); !slices.Equal(got, []string{`A\/b`, "c"}) {
		t.Errorf("an escaped slash split: %q", got)
	}
	if _, err := Split("A/("); err == nil {
		t.Error(`Split("A/(") compiled a bad element`)
	}
}

func TestBelowRewritesTheTopLevel(t *testing.T) {
	p, _ := Split("Sum|Size/x=1|Other")
	if got := p.below("BenchmarkSizes"); !slices.Equal(got, []string{"^BenchmarkSizes$/x=1"}) {
		t.Errorf("below = %q", got)
	}
	if p.MatchTop("BenchmarkNone") {
		t.Error("MatchTop matched a benchmark no alternative selects")
	}
	if got := Exact("BenchmarkA/size=8/x.y"); got != `^BenchmarkA$/^size=8$/^x\.y$` {
		t.Errorf("Exact = %q", got)
	}
}

func TestParseLine(t *testing.T) {
	r, err := ParseLine("BenchmarkA/size=8-4   \t  1000\t  12.5 ns/op\t 1200.5 MB/s\t 8 B/op\t 1 allocs/op\t 3 widgets/op", 4)
	if err != nil || r == nil {
		t.Fatalf("ParseLine = %v, %v", r, err)
	}
	if r.Name != "BenchmarkA/size=8" || r.N != 1000 || r.Values["ns/op"] != 12.5 || r.Values["MB/s"] != 1200.5 || r.Values["widgets/op"] != 3 {
		t.Errorf("ParseLine = %+v", r)
	}
	if !slices.Equal(r.Units, []string{"ns/op", "MB/s", "B/op", "allocs/op", "widgets/op"}) {
		t.Errorf("units %q", r.Units)
	}
	// At GOMAXPROCS 1 go test prints no suffix: a name ending in -4 keeps it.
	if r, _ := ParseLine("BenchmarkA/size-4 10 1 ns/op", 1); r == nil || r.Name != "BenchmarkA/size-4" {
		t.Errorf("procs 1: %+v", r)
	}
	for _, line := range []string{"goos: linux", "PASS", "    x_test.go:3: log", "BenchmarkA"} {
		if r, err := ParseLine(line, 2); r != nil || err != nil {
			t.Errorf("ParseLine(%q) = %v, %v; want nothing", line, r, err)
		}
	}
	if _, err := ParseLine("BenchmarkA-2 \tprinted by the benchmark", 2); err == nil {
		t.Error("a broken result line parsed")
	}
}

func TestDiscoveredLeaves(t *testing.T) {
	out := `goos: linux
BenchmarkS
BenchmarkS/size=8
BenchmarkS/size=8/alloc
BenchmarkS/size=8/alloc-2   	       1	       862.0 ns/op
BenchmarkS/size=8/skip
    s_test.go:9: not today
--- SKIP: BenchmarkS/size=8/skip
BenchmarkS/size=8/fails
--- FAIL: BenchmarkS/size=8/fails
BenchmarkS/size=64
BenchmarkS/size=64/alloc
BenchmarkSOther
`
	leaves, skipped := discovered(out, "BenchmarkS")
	want := []string{"BenchmarkS/size=8/alloc", "BenchmarkS/size=8/fails", "BenchmarkS/size=64/alloc"}
	if !slices.Equal(leaves, want) {
		t.Errorf("leaves %q, want %q", leaves, want)
	}
	if skipped["BenchmarkS/size=8/skip"] != "s_test.go:9: not today" {
		t.Errorf("skipped %q", skipped)
	}
}
