package benchctl

import (
	"bytes"
	"fmt"

	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// CommentMarker opens every pull-request comment ab --comment writes: a
// CI job finds its earlier comment by it and updates that one instead of
// adding another.
const CommentMarker = "<!-- benchctl ab -->"

// prComment is the pull-request comment of an A/B result whose Markdown
// report (table, explanations, details) is md: the marker, a title with
// the two revisions, the check's outcome (which regressions fail it, and
// which the policy waives), then the report.
func prComment(res *ab.Result, md []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n### benchctl ab: %s (%s) against %s (%s)\n\n", CommentMarker,
		res.Revs[1].Rev, revision.Short(res.Revs[1].Commit), res.Revs[0].Rev, revision.Short(res.Revs[0].Commit))
	switch n := len(res.Regressions); {
	case n > 0:
		fmt.Fprintf(&b, ":x: **%d regression(s) fail this check:**", n)
		for _, r := range res.Regressions {
			ch := r.Decision.Change
			fmt.Fprintf(&b, " %s %s %+.1f %% [%+.1f, %+.1f];", r.Benchmark, r.Unit, ch.Pct(), (ch.Lo-1)*100, (ch.Hi-1)*100)
		}
		b.WriteString("\n\n")
	case res.Failed > 0:
		fmt.Fprintf(&b, ":x: **%d fork(s) failed**: see the logs in the results.\n\n", res.Failed)
	default:
		b.WriteString(":white_check_mark: No regression fails this check.\n\n")
	}
	for _, w := range res.Waived {
		ch := w.Decision.Change
		fmt.Fprintf(&b, "- %s %s %+.1f %% [%+.1f, %+.1f] does not fail it: %s\n", w.Benchmark, w.Unit, ch.Pct(), (ch.Lo-1)*100, (ch.Hi-1)*100, w.Why)
	}
	if len(res.Waived) > 0 {
		b.WriteString("\n")
	}
	b.Write(md)
	return b.Bytes()
}
