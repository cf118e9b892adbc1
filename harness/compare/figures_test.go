package compare

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestResultsFigures checks the figures that results/*/README.md quote
// from committed raw files (listed in results/figures.tsv): today's
// Markdown comparison of the raw file has the quoted text in the row's
// line of the unit's table, and the README quotes it (a "\|" of a
// Markdown cell read as "|").
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
		fs := strings.Split(line, "\t")
		if len(fs) != 6 {
			t.Fatalf("figures.tsv: %q has %d fields, want 6", line, len(fs))
		}
		readme, raw, col, unit, row, text := fs[0], fs[1], fs[2], fs[3], fs[4], fs[5]
		n++
		ts, err := Build([]string{filepath.Join(root, raw)}, Options{Col: col, MinChange: DefaultMinChange})
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var md bytes.Buffer
		if err := ts.Markdown(&md, nil); err != nil {
			t.Fatal(err)
		}
		got := unitRow(md.String(), unit, row)
		if !strings.Contains(got, text) {
			t.Errorf("%s %s %s: today's compare has %q, which lacks %q", raw, unit, row, got, text)
		}
		doc, err := os.ReadFile(filepath.Join(root, readme))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.ReplaceAll(string(doc), `\|`, "|"), text) {
			t.Errorf("%s does not quote %q", readme, text)
		}
	}
	if n == 0 {
		t.Fatal("figures.tsv lists no figure")
	}
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
