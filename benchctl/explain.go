package benchctl

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/explain"
)

// showExplained prints, under the table, the functions behind each
// explained row: its named functions with their change per op, interval
// and share, or why none is named; and where the profiles, difference,
// text and flame graph are.
func showExplained(w io.Writer, res *ab.Result) {
	if len(res.Explained) == 0 {
		return
	}
	fmt.Fprintf(w, "\n**Functions behind the rows** (flat CPU per op, experiment − baseline, with its %.0f %% interval over the pairs of profiling forks; a function is named when its change is significant at a false-discovery rate of %g over the functions; share: of the row's change)\n\n",
		100*explain.Confidence, res.Tables.Options.Alpha)
	for _, e := range res.Explained {
		row := strings.TrimPrefix(e.Case, "Benchmark")
		rel, err := filepath.Rel(res.Out, e.Dir)
		if err != nil {
			rel = e.Dir
		}
		text := e.Line()
		if text == "" {
			text = e.Why()
		}
		fmt.Fprintf(w, "- %s: %s; %s\n", row, text, rel)
	}
}
