package ab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

func writePolicy(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func regression(unit, name string, ratio, lo, hi float64) compare.Regression {
	return compare.Regression{Unit: unit, Benchmark: name, Column: "experiment", Ratio: ratio,
		Decision: &compare.Decision{Verdict: verdict.Changed, Worse: true, Change: verdict.Change{Ratio: ratio, Lo: lo, Hi: hi}}}
}

// TestPolicy: the first matching rule decides; an expected regression is
// waived with its reason, one under its threshold is waived unless its
// whole interval is beyond it (for a throughput, below its inverse), and
// a benchmark no rule matches keeps its regression.
func TestPolicy(t *testing.T) {
	p, err := LoadPolicy(writePolicy(t, `{"benchmarks": [
		{"match": "^Build$", "expected": true, "reason": "builds the index eagerly"},
		{"match": "^Get/", "threshold": 5},
		{"match": "^Get/size=8$", "expected": true}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	fail, waived := p.Apply([]compare.Regression{
		regression("sec/op", "Build-2", 1.5, 1.4, 1.6),
		regression("sec/op", "Get/size=8-2", 1.10, 1.03, 1.20), // the second rule, not the third
		regression("sec/op", "Get/size=64-2", 1.10, 1.06, 1.20),
		regression("ops/s", "Get/size=512", 0.80, 0.70, 0.90),
		regression("sec/op", "Put-2", 1.02, 1.01, 1.03),
	})
	var failed []string
	for _, r := range fail {
		failed = append(failed, r.Benchmark)
	}
	if strings.Join(failed, " ") != "Get/size=64-2 Get/size=512 Put-2" {
		t.Errorf("failing: %v", failed)
	}
	if len(waived) != 2 || waived[0].Benchmark != "Build-2" || waived[0].Why != "expected by the policy: builds the index eagerly" ||
		waived[1].Benchmark != "Get/size=8-2" || !strings.Contains(waived[1].Why, "threshold of 5 %") {
		t.Errorf("waived: %+v", waived)
	}
	var none *Policy
	if fail, waived := none.Apply([]compare.Regression{regression("sec/op", "Build-2", 1.5, 1.4, 1.6)}); len(fail) != 1 || len(waived) != 0 {
		t.Errorf("no policy: %v %v", fail, waived)
	}
}

func TestPolicyBadFiles(t *testing.T) {
	for text, want := range map[string]string{
		`{"benchmarks": [{"match": "^Get", "treshold": 5}]}`:                 `unknown field "treshold"`,
		`{"benchmarks": [{"threshold": 5}]}`:                                 "rule 1 (match \"\"): no match",
		`{"benchmarks": [{"match": "(", "threshold": 5}]}`:                   "rule 1 (match \"(\"): error parsing regexp",
		`{"benchmarks": [{"match": "a"}, {"match": "b", "threshold": -1}]}`:  "rule 2 (match \"b\"): threshold -1",
		`{"benchmarks": [{"match": "a", "expected": true, "threshold": 2}]}`: "an expected regression has no threshold",
		`{"benchmarks": [`: "unexpected EOF",
	} {
		p := writePolicy(t, text)
		if _, err := LoadPolicy(p); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want %q naming the file", text, err, want)
		}
	}
	if _, err := LoadPolicy(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing file was read")
	}
}
