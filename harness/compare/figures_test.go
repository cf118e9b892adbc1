package compare

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestResultsFigures checks the figures that results/*/README.md quote
// from committed raw files (listed in results/figures.tsv): today's
// comparison of the raw file has the figure in the row's line of the
// unit's table, and the README quotes it (a "\|" of a Markdown cell read
// as "|", a line break or run of spaces as one space), verbatim or in the
// words of the optional QUOTE column.
func TestResultsFigures(t *testing.T) {
	root := filepath.Join("..", "..", "results")
	f, err := os.Open(filepath.Join(root, "figures.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fig, err := parseFigure(line)
		if err != nil {
			t.Fatal(err)
		}
		n++
		got := fig.compared(t, root)
		if !strings.Contains(got, fig.text) {
			t.Errorf("%s %s %s: today's compare has %q, which lacks %q", fig.raw, fig.unit, fig.row, got, fig.text)
		}
		doc, err := os.ReadFile(filepath.Join(root, fig.readme))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(words(strings.ReplaceAll(string(doc), `\|`, "|")), words(fig.quote)) {
			t.Errorf("%s does not quote %q", fig.readme, fig.quote)
		}
	}
	if n == 0 {
		t.Fatal("figures.tsv lists no figure")
	}
}

// A figure is one line of results/figures.tsv.
type figure struct {
	readme, raw, col, unit, row, text string
	quote                             string // as the README words it
	samples, format                   string // compare's --samples and --format
}

func parseFigure(line string) (figure, error) {
	fs := strings.Split(line, "\t")
	if len(fs) < 6 || len(fs) > 8 {
		return figure{}, fmt.Errorf("figures.tsv: %q has %d fields, want 6 to 8", line, len(fs))
	}
	fig := figure{readme: fs[0], raw: fs[1], col: fs[2], unit: fs[3], row: fs[4], text: fs[5], quote: fs[5], format: "md"}
	if len(fs) > 6 && fs[6] != "-" {
		fig.quote = fs[6]
	}
	if len(fs) > 7 {
		for kv := range strings.SplitSeq(fs[7], ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "samples":
				fig.samples = v
			case "format":
				fig.format = v
			default:
				return figure{}, fmt.Errorf("figures.tsv: %q: unknown flag %q", line, kv)
			}
		}
	}
	return fig, nil
}

// compared is the line of the figure's row in today's comparison of its
// raw file.
func (fig figure) compared(t *testing.T, root string) string {
	t.Helper()
	ts, err := Build([]string{filepath.Join(root, fig.raw)}, Options{Col: fig.col, MinChange: DefaultMinChange, Samples: fig.samples})
	if err != nil {
		t.Fatalf("%s: %v", fig.raw, err)
	}
	var out bytes.Buffer
	switch fig.format {
	case "md":
		err = ts.Markdown(&out, nil)
	case "text":
		err = ts.Text(&out, nil)
	default:
		t.Fatalf("figures.tsv: unknown format %q", fig.format)
	}
	if err != nil {
		t.Fatal(err)
	}
	if fig.format == "text" {
		return textRow(out.String(), fig.unit, fig.row)
	}
	return unitRow(out.String(), fig.unit, fig.row)
}

// unitRow is the line of row in the Markdown table of unit.
func unitRow(md, unit, row string) string {
	on := false
	rowLine := regexp.MustCompile(`^\| ` + regexp.QuoteMeta(row) + `(-\d+)? +\|`)
	for line := range strings.Lines(md) {
		switch {
		case strings.HasPrefix(line, "**"+unit+"**"):
			on = true
		case strings.HasPrefix(line, "**"):
			on = false
		case on && rowLine.MatchString(line):
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// textRow is the line of row in benchstat's text table of unit: the
// table starts at a header naming the unit and ends at a blank line.
func textRow(text, unit, row string) string {
	on := false
	for line := range strings.Lines(text) {
		fs := strings.Fields(line)
		switch {
		case len(fs) == 0:
			on = false
		case fs[0] == unit:
			on = true
		case on && fs[0] == row:
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// words is s with each run of white space one space.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }
