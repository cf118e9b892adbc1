package nightly

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNightlyExplainsANewRegression: a new regression not bisected is
// explained by an A/B of its two runs' commits: DIR/explain/<machine>/
// holds the A/B, its report and explained.json; the README line gives
// the A/B's change and the function the change is in, and still the
// command that bisects it; a later night does not explain it again, and
// none of its files is told as written (--server must not upload them as
// nightly runs).
func TestNightlyExplainsANewRegression(t *testing.T) {
	if testing.Short() {
		t.Skip("builds revisions")
	}
	a := newAlarm(t)
	a.n.explainNew(t.Context(), a.s, a.regs)
	lines := a.m.Regressions()
	if len(lines) != 1 || !strings.Contains(lines[0], "; the A/B of its commits: +") || !strings.Contains(lines[0], "; in tiny.Work +") ||
		!strings.Contains(lines[0], "explanation](explain/m1/") || !strings.Contains(lines[0], "bisect it: `") {
		t.Fatalf("README line %q\n%s", lines, a.stderr.String())
	}
	dir := explainDir(a.results, "m1", a.regs[0])
	b, err := os.ReadFile(filepath.Join(dir, "explained.json"))
	if err != nil {
		t.Fatal(err)
	}
	var x Explanation
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	if x.Verdict != "changed" || x.Good != a.c[0] || x.Bad != a.c[4] || x.Error != "" || !strings.HasPrefix(x.Functions, "tiny.Work +") {
		t.Errorf("explained.json: %+v", x)
	}
	md, err := os.ReadFile(filepath.Join(dir, "explain.md"))
	if err != nil || !strings.Contains(string(md), "Functions behind the rows") {
		t.Errorf("explain.md: %v\n%s", err, md)
	}
	if _, err := os.Stat(filepath.Join(dir, x.Profiles, "diff.pb.gz")); err != nil {
		t.Errorf("the row's difference profile: %v", err)
	}
	if len(*a.written) != 0 {
		t.Errorf("told as written: %v", *a.written)
	}
	before := a.stderr.Len()
	a.n.explainNew(t.Context(), a.s, a.regs)
	if strings.Contains(a.stderr.String()[before:], "explain: ") {
		t.Errorf("explained again:\n%s", a.stderr.String()[before:])
	}
}
