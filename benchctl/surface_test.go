package benchctl

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// goTool runs the go command in dir and returns its output.
func goTool(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPublicSurface: what the module exports stands alone. go doc of the
// author types lists the methods an author calls (they are defined in
// harness, not aliased); no public package exports a field, parameter or
// result of an internal package's type; and harness, the author API with
// the measuring core, imports no package of this module but the result
// model, the host checks and the profilers.
func TestPublicSurface(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go doc and go list")
	}
	for sym, want := range map[string]string{
		"Trial.Int":         "func (t *Trial) Int(",
		"Worker.Sink":       "func (w *Worker) Sink(",
		"Group.OnIteration": "func (g *Group) OnIteration(",
	} {
		if out := goTool(t, "..", "doc", "./harness", sym); !strings.Contains(out, want) {
			t.Errorf("go doc ./harness %s:\n%s\nwant %q", sym, out, want)
		}
	}
	entries, err := os.ReadDir("../internal")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, regexp.QuoteMeta(e.Name()))
		}
	}
	internalType := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\.[A-Z]\w*`)
	for _, pkg := range strings.Fields(goTool(t, "..", "list", "./harness/...", "./benchctl/...")) {
		doc := goTool(t, "..", "doc", "-all", pkg)
		for _, line := range strings.Split(doc, "\n") {
			code := strings.TrimSpace(line)
			if strings.HasPrefix(line, "    ") || strings.HasPrefix(code, "//") {
				continue // documentation, not a declaration
			}
			if strings.HasPrefix(code, "var ") {
				code, _, _ = strings.Cut(code, " = ") // a variable's type, not its value
			}
			if m := internalType.FindString(code); m != "" {
				t.Errorf("%s exports %s, a type of an internal package: %s", pkg, m, code)
			}
		}
	}
	allowed := map[string]bool{"harness/result": true, "harness/hostcheck": true, "internal/profile": true}
	for _, imp := range strings.Fields(goTool(t, "..", "list", "-f", `{{join .Imports " "}}`, "./harness")) {
		if rest, ok := strings.CutPrefix(imp, "github.com/ledgerbench/ledgerbench/"); ok && !allowed[rest] {
			t.Errorf("harness imports %s", rest)
		}
	}
}

// TestBenchstatOnlyAsAFormat: in harness/compare, only the benchstat
// output imports x/perf's benchmath; every other file decides by the
// verdict statistics alone.
func TestBenchstatOnlyAsAFormat(t *testing.T) {
	files, err := filepath.Glob("../harness/compare/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var importers []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "golang.org/x/perf/benchmath" {
				importers = append(importers, filepath.Base(f))
			}
		}
	}
	if len(importers) != 1 || importers[0] != "benchstat.go" {
		t.Errorf("benchmath imported by %v, want only benchstat.go", importers)
	}
}
