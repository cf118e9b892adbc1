package harness_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/internal/harnesstest"
)

var paramBench = harnesstest.ParamBench

func TestExpandCartesianProduct(t *testing.T) {
	b := paramBench()
	points, err := harness.Expand(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pt := range points {
		got = append(got, b.FullName()+pt.Suffix())
	}
	want := []string{
		"BenchmarkParams/impl=skiplist/cachedEntries=1000",
		"BenchmarkParams/impl=skiplist/cachedEntries=100000",
		"BenchmarkParams/impl=paged/cachedEntries=1000",
		"BenchmarkParams/impl=paged/cachedEntries=100000",
	}
	if !slices.Equal(got, want) {
		t.Errorf("points\n got %q\nwant %q", got, want)
	}
}

// TestExpandChecksEveryValue: an override replaces a parameter's values,
// and each value is checked against the parameter's kind and set.
func TestExpandChecksEveryValue(t *testing.T) {
	b := paramBench()
	points, err := harness.Expand(b, map[string][]string{"cachedEntries": {"10", "20"}, "impl": {"paged"}})
	if err != nil || len(points) != 2 || points[1].Suffix() != "/impl=paged/cachedEntries=20" {
		t.Fatalf("overridden: %v %v", points, err)
	}
	for _, tc := range []struct {
		o    map[string][]string
		want string
	}{
		{map[string][]string{"cachedEntries": {"ten"}}, `BenchmarkParams: parameter cachedEntries: value "ten" is not a valid int`},
		{map[string][]string{"impl": {"btree"}}, `parameter impl: unknown value "btree" (valid: skiplist, paged)`},
		{map[string][]string{"impl": {}}, `BenchmarkParams: parameter impl has no values`},
	} {
		if _, err := harness.Expand(b, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.o, err, tc.want)
		}
	}
}
