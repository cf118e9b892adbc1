package compare

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchunit"
)

// geoCol is one column's cell of the geomean row.
type geoCol struct {
	center  float64
	ok      bool // center is defined
	ratio   float64
	ratioOK bool // ratio is defined (not in the baseline column)
	notes   []string
}

// geomeans computes the geomean row by benchstat's rule: each column's
// geometric mean over every cell the column has, and, for each later
// column, the geometric mean of its rows' ratios to the baseline (0/0
// counting as 1). What cannot be computed is left out with the note
// benchstat gives, and a column whose rows differ from the baseline's is
// noted as not comparable.
func (t *Table) geomeans() []geoCol {
	out := make([]geoCol, len(t.Cols))
	nBase := 0
	for _, row := range t.Rows {
		if t.cell(row, t.Cols[0]) != nil {
			nBase++
		}
	}
	for i, col := range t.Cols {
		var centers, ratios []float64
		bad := false
		for _, row := range t.Rows {
			c := t.cell(row, col)
			if c == nil {
				continue
			}
			centers = append(centers, c.Center)
			if i == 0 {
				continue
			}
			if b := t.cell(row, t.Cols[0]); b != nil {
				x, y := c.Center, b.Center
				switch {
				case x == y:
					ratios = append(ratios, 1)
				case y == 0:
					bad = true
					ratios = append(ratios, 0)
				default:
					ratios = append(ratios, x/y)
				}
			}
		}
		g := &out[i]
		if i > 0 && nBase != len(ratios) {
			g.notes = append(g.notes, "benchmark set differs from baseline; geomeans may not be comparable")
		}
		if g.center = stats.GeoMean(centers); math.IsNaN(g.center) {
			g.notes = append(g.notes, "summaries must be >0 to compute geomean")
		} else {
			g.ok = true
		}
		if i > 0 && !bad {
			if g.ratio = stats.GeoMean(ratios); math.IsNaN(g.ratio) {
				g.notes = append(g.notes, "ratios must be >0 to compute geomean")
			} else {
				g.ratioOK = true
			}
		}
	}
	return out
}

// text is the geomean's center, scaled for unit, and its change: "" for
// what is undefined.
func (g geoCol) text(unit string) (center, ratio string) {
	if g.ok {
		center = benchunit.Scale(g.center, benchunit.ClassOf(unit))
	}
	if g.ratioOK {
		ratio = formatRatio(g.ratio)
	}
	return center, ratio
}

// footnotes numbers notes in the order they are first used, as
// benchstat's ¹ ² ³ markers, and writes them under a table.
type footnotes struct{ texts []string }

var superscripts = []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")

// mark returns the marker of each note (" ¹²" style), numbering new ones.
func (f *footnotes) mark(notes []string) string {
	var b strings.Builder
	for _, n := range notes {
		i := 0
		for i < len(f.texts) && f.texts[i] != n {
			i++
		}
		if i == len(f.texts) {
			f.texts = append(f.texts, n)
		}
		b.WriteString(" " + sup(i+1))
	}
	return b.String()
}

func sup(n int) string {
	var digits []rune
	for _, d := range fmt.Sprint(n) {
		digits = append(digits, superscripts[d-'0'])
	}
	return string(digits)
}

// write prints the notes, one per line, with prefix before each.
func (f *footnotes) write(w io.Writer, prefix string) {
	for i, n := range f.texts {
		fmt.Fprintf(w, "%s%s %s\n", prefix, sup(i+1), n)
	}
}
