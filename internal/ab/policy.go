package ab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// Policy says which regressions fail a comparison, per benchmark: a
// threshold a regression must exceed to fail, or a regression that is
// expected (a known cost of the change) and fails nothing. It is read
// from a JSON file (LoadPolicy):
//
//	{"benchmarks": [
//	  {"match": "^Get/", "threshold": 5},
//	  {"match": "^Build$", "expected": true, "reason": "builds the index eagerly now"}
//	]}
//
// A rule's match is a regular expression of the benchmark's name as the
// table shows it, without its -N GOMAXPROCS suffix ("Get/size=8"); the
// first rule that matches a benchmark is its rule, and a benchmark no
// rule matches keeps every regression.
type Policy struct {
	Benchmarks []Rule `json:"benchmarks"`
}

// Rule is a policy's rule for the benchmarks its Match selects.
type Rule struct {
	Match string `json:"match"`
	// Threshold, in percent, is how much worse a regression must surely
	// be to fail: its whole interval lies beyond it (for a time, a
	// ratio above 1+Threshold/100; for a throughput, below its inverse).
	Threshold float64 `json:"threshold,omitempty"`
	// Expected waives the benchmark's regressions; Reason says why.
	Expected bool   `json:"expected,omitempty"`
	Reason   string `json:"reason,omitempty"`
	re       *regexp.Regexp
}

// LoadPolicy reads and checks a policy file: unknown keys, a rule
// without match or with a match that does not compile, a negative or
// non-finite threshold, or an expected rule with a threshold are errors
// naming the file and the rule.
func LoadPolicy(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p Policy
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for i := range p.Benchmarks {
		r := &p.Benchmarks[i]
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s: rule %d (match %q): %s", path, i+1, r.Match, fmt.Sprintf(format, args...))
		}
		if r.Match == "" {
			return nil, bad("no match")
		}
		if r.re, err = regexp.Compile(r.Match); err != nil {
			return nil, bad("%v", err)
		}
		if r.Threshold < 0 || math.IsNaN(r.Threshold) || math.IsInf(r.Threshold, 0) {
			return nil, bad("threshold %g: want a percentage of 0 or more", r.Threshold)
		}
		if r.Expected && r.Threshold != 0 {
			return nil, bad("an expected regression has no threshold")
		}
	}
	return &p, nil
}

// rule is the first rule matching the benchmark named name, or nil.
func (p *Policy) rule(name string) *Rule {
	if p == nil {
		return nil
	}
	name = result.TrimProcs(name)
	for i := range p.Benchmarks {
		if p.Benchmarks[i].re.MatchString(name) {
			return &p.Benchmarks[i]
		}
	}
	return nil
}

// Waived is a regression the policy keeps from failing, and why.
type Waived struct {
	compare.Regression
	Why string
}

// Apply splits regressions into those that fail and those the policy
// waives (expected, or not surely beyond their threshold).
func (p *Policy) Apply(regs []compare.Regression) (fail []compare.Regression, waived []Waived) {
	for _, r := range regs {
		rule := p.rule(r.Benchmark)
		switch {
		case rule == nil:
			fail = append(fail, r)
		case rule.Expected:
			why := "expected by the policy"
			if rule.Reason != "" {
				why += ": " + rule.Reason
			}
			waived = append(waived, Waived{r, why})
		case beyond(r, rule.Threshold):
			fail = append(fail, r)
		default:
			waived = append(waived, Waived{r, fmt.Sprintf("not surely beyond the policy's threshold of %g %% for %s", rule.Threshold, rule.Match)})
		}
	}
	return fail, waived
}

// beyond says whether the regression's whole interval is worse than
// threshold percent.
func beyond(r compare.Regression, threshold float64) bool {
	ch := r.Decision.Change
	limit := 1 + threshold/100
	if r.Unit == "ops/s" {
		return ch.Hi < 1/limit
	}
	return ch.Lo > limit
}
