package compare

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/perf/benchproc"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// sharedProcs is the -N GOMAXPROCS suffix every row of t shares ("-2"):
// "" when no row has one, when the rows' suffixes differ, or when
// dropping it would give two rows one name.
func (t *Table) sharedProcs() string {
	suffix := ""
	seen := map[string]bool{}
	for i, row := range t.Rows {
		full := row.StringValues()
		name := result.TrimProcs(full)
		s := full[len(name):]
		if s == "" || i > 0 && s != suffix || seen[name] {
			return ""
		}
		suffix = s
		seen[name] = true
	}
	return suffix
}

// RowName is row's benchmark name as the reports show it: without its -N
// GOMAXPROCS suffix when every row of the table has the same one (the
// unit's line then says it once), so a benchmark keeps its name whatever
// GOMAXPROCS a mode runs it at (ab --duet runs each side on half of the
// CPUs, at GOMAXPROCS 1 on two). Benchstat's text (Text) keeps go test's
// names as they are.
func (t *Table) RowName(row benchproc.Key) string {
	name := row.StringValues()
	if s := t.sharedProcs(); s != "" {
		return strings.TrimSuffix(name, s)
	}
	return name
}

// GOMAXPROCS is the GOMAXPROCS every row of the table ran at when
// RowName drops it from their names, else 0.
func (t *Table) GOMAXPROCS() int {
	s := t.sharedProcs()
	if s == "" {
		return 0
	}
	n, _ := strconv.Atoi(s[1:]) // digits: see result.TrimProcs
	return n
}

// procsNote is what a Markdown table's unit line says of the GOMAXPROCS
// its rows' names leave out.
func (t *Table) procsNote() string {
	if n := t.GOMAXPROCS(); n > 0 {
		return fmt.Sprintf(" at GOMAXPROCS %d", n)
	}
	return ""
}
