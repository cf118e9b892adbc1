package benchctl

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestNamesNothingOfThisRepository: the library (harness/ and benchctl/)
// spells neither this repository's module path nor its suites or
// families in any string of its code, and no error that harness/ makes
// names a command-line flag (the CLI words its own). Import paths are
// exempt.
func TestNamesNothingOfThisRepository(t *testing.T) {
	ours := map[string]bool{}
	for _, s := range []string{"cache", "cursor", "dedup", "location", "self", "insert", "catchup", "read", "eviction"} {
		ours[s] = true
	}
	module := regexp.MustCompile(`github\.com/ledgerbench|ledgerbench\.`)
	suiteFlag := regexp.MustCompile(`--suite[ =](cache|cursor|dedup|location|self)\b`)
	flag := regexp.MustCompile(`(^|[ "(])--[a-z][a-z-]+`)
	for _, dir := range []string{"../harness", "."} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			imports := map[*ast.BasicLit]bool{}
			for _, im := range f.Imports {
				imports[im.Path] = true
			}
			library := strings.HasPrefix(path, "../harness")
			// The format strings of errors made in the library.
			errorText := map[*ast.BasicLit]bool{}
			ast.Inspect(f, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok && len(call.Args) > 0 {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "fmt" && sel.Sel.Name == "Errorf" || x.Name == "errors" && sel.Sel.Name == "New") {
							if lit, ok := call.Args[0].(*ast.BasicLit); ok {
								errorText[lit] = true
							}
						}
					}
				}
				return true
			})
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING || imports[lit] {
					return true
				}
				s, _ := strconv.Unquote(lit.Value)
				switch {
				case module.MatchString(s):
					t.Errorf("%s: string %q names this repository's module", path, s)
				case ours[s] || suiteFlag.MatchString(s):
					t.Errorf("%s: string %q names this repository's suites or families", path, s)
				case library && errorText[lit] && flag.MatchString(s):
					t.Errorf("%s: library string %q names a command-line flag", path, s)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestLibraryErrorsNameNoFlag: no error that the library makes (harness,
// internal and impl, but the server's and the fleet's commands) names a command-line
// flag: the CLI words its own advice.
func TestLibraryErrorsNameNoFlag(t *testing.T) {
	flag := regexp.MustCompile(`(^|[ "(])--[a-z][a-z-]+`)
	for _, dir := range []string{"../harness", "../internal", "../impl"} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
				strings.HasPrefix(filepath.ToSlash(path), "../internal/servecmd/") || strings.HasPrefix(filepath.ToSlash(path), "../internal/fleetcmd/") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if s, ok := errorFormat(n); ok && flag.MatchString(s) {
					t.Errorf("%s: error %q names a command-line flag", path, s)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// errorFormat is the format string of an fmt.Errorf, errors.New or
// session.Input call (whose options in braces are no flags).
func errorFormat(n ast.Node) (string, bool) {
	call, ok := n.(*ast.CallExpr)
	if !ok || len(call.Args) == 0 {
		return "", false
	}
	var pkg, name string // session's own calls of Input are unqualified
	switch f := call.Fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		x, ok := f.X.(*ast.Ident)
		if !ok {
			return "", false
		}
		pkg, name = x.Name, f.Sel.Name
	}
	if !(pkg == "fmt" && name == "Errorf" || pkg == "errors" && name == "New" || (pkg == "session" || pkg == "") && (name == "Input" || name == "Failed")) {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// TestProgramLinksNoDatabase: a program of another module whose main is
// benchctl.Main (examples/counter) builds with no SQL driver (modernc sqlite, pgx, lib/pq, go-sqlite3), no store
// and no server among its dependencies, and no plotting package (gonum's
// plot and what it draws with: LaTeX, PDF, fonts); they are linked only
// where Config.Commands adds the server's commands and Config.Charts the
// charts (cmd/benchctl).
func TestProgramLinksNoDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list on another module")
	}
	deps := func(dir, pkg string) []string { return strings.Fields(goTool(t, dir, "list", "-deps", pkg)) }
	database := regexp.MustCompile(`^(modernc\.org/sqlite|github\.com/jackc/pgx|github\.com/lib/pq|github\.com/mattn/go-sqlite3|github\.com/ledgerbench/ledgerbench/internal/(store|server|chart)$|gonum\.org/v1/plot|codeberg\.org/go-latex|codeberg\.org/go-pdf|github\.com/go-pdf|golang\.org/x/image)`)
	var linked []string
	for _, d := range deps("../examples/counter", ".") {
		if database.MatchString(d) {
			linked = append(linked, d)
		}
	}
	if len(linked) > 0 {
		t.Errorf("examples/counter links %v", linked)
	}
	var server, charts bool
	for _, d := range deps("..", "./cmd/benchctl") {
		server = server || d == "github.com/ledgerbench/ledgerbench/internal/store"
		charts = charts || strings.HasPrefix(d, "gonum.org/v1/plot")
	}
	if !server || !charts {
		t.Errorf("cmd/benchctl links the store: %v, the charts: %v (serve or the charts are gone from it)", server, charts)
	}
}

// TestToolIsLean: a module that adds tool/benchctl as its tool, tidied
// from the module cache as `go get -tool` would resolve it, gains fewer
// than 25 indirect requirements besides the tool's own module and none of the modules of the server
// (SQL drivers), the charts (plotting) or this repository's suites
// (Pebble), and the tool builds and runs there. cmd/benchctl, which links
// them, is measured beside it so the count is known to be the tool's.
func TestToolIsLean(t *testing.T) {
	if testing.Short() {
		t.Skip("tidies and builds a module")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	// From the module cache this module's build filled first, with its
	// go.sum's hashes. An adopter's graph is pruned: it does not see the
	// requirements of modules the tool does not use (River's), so it may
	// select older versions of its dependencies' test-only modules than
	// this module does (testify v1.11.1, not River's v1.12.1), which
	// neither the cache nor go.sum holds: those come from the module
	// proxy, unverified by a checksum database this VM cannot reach.
	proxy := strings.TrimSpace(goTool(t, root, "env", "GOPROXY"))
	t.Setenv("GOPROXY", "file://"+filepath.Join(strings.TrimSpace(goTool(t, root, "env", "GOMODCACHE")), "cache", "download")+","+proxy)
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOFLAGS", "-mod=mod -buildvcs=false")
	adopt := func(tool string) (dir string, indirect []string) {
		dir = t.TempDir()
		mod := "module example.com/adopter\n\ngo 1.26.0\n\nrequire github.com/ledgerbench/ledgerbench v0.0.0\n\nreplace github.com/ledgerbench/ledgerbench => " + root + "\n\ntool github.com/ledgerbench/ledgerbench/" + tool + "\n"
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
			t.Fatal(err)
		}
		goTool(t, dir, "mod", "tidy")
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			// The tool's own module is the requirement the user asked for
			// (indirect only because no package of theirs imports it).
			if strings.HasSuffix(l, "// indirect") && !strings.HasPrefix(strings.TrimSpace(l), "github.com/ledgerbench/ledgerbench ") {
				indirect = append(indirect, strings.Fields(l)[0])
			}
		}
		return dir, indirect
	}
	dir, lean := adopt("tool/benchctl")
	heavy := regexp.MustCompile(`^(modernc\.org/sqlite|github\.com/jackc/pgx|github\.com/cockroachdb/pebble|gonum\.org/v1/plot|codeberg\.org/)`)
	for _, m := range lean {
		if heavy.MatchString(m) {
			t.Errorf("the tool requires %s", m)
		}
	}
	if len(lean) >= 25 {
		t.Errorf("the tool adds %d indirect requirements, want fewer than 25: %v", len(lean), lean)
	}
	if out := goTool(t, dir, "tool", "benchctl", "--help"); !strings.Contains(out, "run ./...") {
		t.Errorf("go tool benchctl --help:\n%s", out)
	}
	_, full := adopt("cmd/benchctl")
	if len(full) <= len(lean) {
		t.Errorf("cmd/benchctl adds %d indirect requirements, the lean tool %d", len(full), len(lean))
	}
	t.Logf("indirect requirements: tool/benchctl %d, cmd/benchctl %d", len(lean), len(full))
}
