package ab

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// recordedAB decides testdata/ab-tinywork.txt, a recorded ab of the tiny
// module's 4× slower work loop (5 interleaved rounds), as ab decides it,
// with the policy in policyText ("" for none).
func recordedAB(t *testing.T, policyText string) *Result {
	t.Helper()
	ts, err := compare.Build([]string{filepath.Join("testdata", "ab-tinywork.txt")}, Verdicts(compare.DefaultAlpha, compare.DefaultMinChange, false))
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{Tables: ts, Revs: []revision.Revision{
		{Name: "baseline", Rev: "main", Commit: "a65b323a974def2328670e27c36f7f8879a1d6ee"},
		{Name: "experiment", Rev: "pr", Commit: "6c35a02c15c35727fa49866bffacaf92a8874f68"}}}
	var policy *Policy
	if policyText != "" {
		if policy, err = LoadPolicy(writePolicy(t, policyText)); err != nil {
			t.Fatal(err)
		}
	}
	res.Regressions, res.Waived = policy.Apply(ts.Regressions())
	return res
}

// TestPRCommentOfRecordedResults: the comment a CI job posts, rendered
// from a recorded A/B: the marker first, the revisions, the regression
// that fails the check with its interval, then the pull-request table;
// with a policy that expects it, the check passes and says why.
func TestPRCommentOfRecordedResults(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   []string
	}{
		{"", []string{":x: **1 regression(s) fail this check:** TinyWork sec/op +249.6 % [+135.0, +420.0];"}},
		{`{"benchmarks": [{"match": "^TinyWork$", "expected": true, "reason": "a larger work loop, on purpose"}]}`,
			[]string{":white_check_mark: No regression fails this check.",
				"- TinyWork sec/op +249.6 % [+135.0, +420.0] does not fail it: expected by the policy: a larger work loop, on purpose"}},
		{`{"benchmarks": [{"match": "^TinyWork$", "threshold": 300}]}`,
			[]string{":white_check_mark: No regression fails this check.", "not surely beyond the policy's threshold of 300 %"}},
	} {
		res := recordedAB(t, tc.policy)
		var md bytes.Buffer
		if err := res.Tables.Markdown(&md, []string{"baseline", "experiment"}); err != nil {
			t.Fatal(err)
		}
		body := string(res.Comment(md.Bytes()))
		if !strings.HasPrefix(body, CommentMarker+"\n### benchctl ab: pr (6c35a02c15c3) against main (a65b323a974d)\n") {
			t.Errorf("policy %q: the comment does not open with the marker and the revisions:\n%s", tc.policy, body)
		}
		for _, want := range append(tc.want, "| TinyWork ", "**sec/op** at GOMAXPROCS 2", "**changed**", "1 of 1 time comparisons changed") {
			if !strings.Contains(body, want) {
				t.Errorf("policy %q: the comment lacks %q:\n%s", tc.policy, want, body)
			}
		}
	}
}
