package revision

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/ledgerbench/ledgerbench/harness"
)

// harnessPkg is the import path of package harness and harnessModule
// its module's, read off a type harness defines so that nothing here
// spells them.
var (
	harnessPkg    = reflect.TypeFor[harness.Registry]().PkgPath()
	harnessModule = strings.TrimSuffix(harnessPkg, "/harness")
)

// ErrUnknownProgram is FindProgram's error when neither a package was
// named nor this binary's build info names its main package.
var ErrUnknownProgram = errors.New("cannot tell which main package this program was built from")

// Program is the user's benchmark program: the main package that calls
// benchctl.Main, located in its module and git repository.
type Program struct {
	ImportPath string // of the main package
	ModulePath string
	ModuleRel  string // module directory, relative to the repository root
	PkgRel     string // main package directory, relative to the module directory
}

// FindProgram locates the main package to rebuild: target when set (a
// package path as go build takes it, resolved from dir), else the main
// package of this binary, which the build info names. root is the
// repository the program must be in.
func FindProgram(dir, root, target string) (*Program, error) {
	if target == "" {
		bi, ok := debug.ReadBuildInfo()
		if !ok || bi.Path == "" || bi.Path == "command-line-arguments" || strings.HasSuffix(bi.Path, ".test") {
			return nil, &UsageError{ErrUnknownProgram}
		}
		target = bi.Path
	}
	cmd := exec.Command("go", "list", "-f", "{{.Name}}\t{{.ImportPath}}\t{{.Dir}}\t{{with .Module}}{{.Path}}\t{{.Dir}}{{end}}", "--", target)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = strings.TrimSpace(string(ee.Stderr))
		}
		return nil, usage("%s: not a package of this module: %s", target, stderr)
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\t")
	if len(f) != 5 {
		return nil, usage("%s: not in a module", target)
	}
	if f[0] != "main" {
		return nil, usage("%s is package %s, not a main package: name the program that calls benchctl.Main", target, f[0])
	}
	p := &Program{ImportPath: f[1], ModulePath: f[3]}
	realRoot, _ := filepath.EvalSymlinks(root)
	modDir, _ := filepath.EvalSymlinks(f[4])
	pkgDir, _ := filepath.EvalSymlinks(f[2])
	if p.ModuleRel, err = filepath.Rel(realRoot, modDir); err != nil || strings.HasPrefix(p.ModuleRel, "..") {
		return nil, usage("%s: its module %s is outside the repository %s", target, f[4], root)
	}
	if p.PkgRel, err = filepath.Rel(modDir, pkgDir); err != nil {
		return nil, err
	}
	return p, nil
}

// listBenchmarks runs `bin list --json` and returns the benchmarks it
// declares; a program too old to list them returns an error.
func listBenchmarks(bin string) ([]Listed, error) {
	cmd := exec.Command(bin, "list", "--json")
	cmd.Env = os.Environ()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the benchmarks of %s: %w", filepath.Base(bin), err)
	}
	var l []Listed
	if err := json.Unmarshal(out, &l); err != nil {
		return nil, fmt.Errorf("listing the benchmarks of %s: %w", filepath.Base(bin), err)
	}
	return l, nil
}

// declarationOverlay maps the base tree's files to the head tree's so
// that the base builds with the head's benchmark program and
// declarations: the main package whole, and in every other package of the
// head's module, the files that import package harness (a base file of
// that kind that the head lacks is removed). When the base's go.mod does
// not require the harness's module, go.mod and go.sum come from the head
// too. It returns the overlay and what it replaced.
func declarationOverlay(p *Program, headMod, baseMod string) (map[string]string, []string, error) {
	replace := map[string]string{}
	var what []string
	dirs := map[string]bool{p.PkgRel: true}
	err := filepath.WalkDir(headMod, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(headMod, path)
		name := d.Name()
		if rel != "." && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && rel != "." {
			return filepath.SkipDir // another module
		}
		if files, _ := goFiles(path, false); len(files) > 0 {
			dirs[rel] = true
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	keys := make([]string, 0, len(dirs))
	for d := range dirs {
		keys = append(keys, d)
	}
	slices.Sort(keys)
	for _, d := range keys {
		whole := d == p.PkgRel
		headFiles, err := goFiles(filepath.Join(headMod, d), whole)
		if err != nil {
			return nil, nil, err
		}
		baseFiles, _ := goFiles(filepath.Join(baseMod, d), whole) // absent in the base: all new
		for _, name := range headFiles {
			replace[filepath.Join(baseMod, d, name)] = filepath.Join(headMod, d, name)
			what = append(what, filepath.ToSlash(filepath.Join(d, name)))
		}
		for _, name := range baseFiles {
			if !slices.Contains(headFiles, name) {
				replace[filepath.Join(baseMod, d, name)] = ""
				what = append(what, "-"+filepath.ToSlash(filepath.Join(d, name)))
			}
		}
	}
	gomod, err := os.ReadFile(filepath.Join(baseMod, "go.mod"))
	if err != nil || !mentionsModule(string(gomod), harnessModule) {
		for _, f := range []string{"go.mod", "go.sum"} {
			if _, err := os.Stat(filepath.Join(headMod, f)); err == nil {
				replace[filepath.Join(baseMod, f)] = filepath.Join(headMod, f)
				what = append(what, f)
			}
		}
	}
	return replace, what, nil
}

// goFiles lists the non-test Go files of dir: all of them when whole, else
// those that import package harness.
func goFiles(dir string, whole bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if !whole {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
			if err != nil {
				continue
			}
			imports := false
			for _, im := range f.Imports {
				imports = imports || strings.Trim(im.Path.Value, `"`) == harnessPkg
			}
			if !imports {
				continue
			}
		}
		out = append(out, name)
	}
	return out, nil
}

// writeOverlay writes the overlay file of go build -overlay.
func writeOverlay(path string, replace map[string]string) error {
	b, err := json.Marshal(struct{ Replace map[string]string }{replace})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// mentionsModule reports whether a go.mod is module mod or names it in a
// require, replace or module line.
func mentionsModule(gomod, mod string) bool {
	for line := range strings.SplitSeq(gomod, "\n") {
		f := strings.Fields(line)
		if (len(f) > 0 && f[0] == mod) || (len(f) > 1 && f[1] == mod) {
			return true
		}
	}
	return false
}
