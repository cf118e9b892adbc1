package revision

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// Built is one revision's benchmark program.
type Built struct {
	Rev     Revision
	ModDir  string // the program's module directory in the revision's tree
	Bin     string // "" when the revision lacks the program
	Benches []Listed
	// Overlay lists the files taken from the experiment, when any were.
	Overlay []string
	// Cached is set when Bin came from the workspace's build cache.
	Cached bool
}

// Has reports whether the program declares the benchmark with this ID.
func (b *Built) Has(id string) bool {
	return slices.ContainsFunc(b.Benches, func(l Listed) bool { return l.ID == id })
}

// BuildProgram builds the main package pkgRel of the module in modDir
// into bin, with the overlay file when one is given. The build is
// reproducible (-trimpath): the same source gives the same bytes in any
// directory, so a program's hash names its source and toolchain, not the
// worktree that built it.
func BuildProgram(modDir, pkgRel, bin, overlay string) error {
	args := []string{"build", "-trimpath", "-o", bin}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.Command("go", append(args, "./"+filepath.ToSlash(pkgRel))...)
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// build builds b's program, from its tree at src, into the workspace,
// or takes it from the build cache, where a fresh build is kept too.
func (w *Workspace) build(p *Program, b *Built, src string) error {
	key, cacheable := w.Cache.key(w.Repo, b.Rev, p, src, b.ModDir)
	if cacheable {
		if bin, ok := w.Cache.get(key); ok {
			w.say("%s %s (%s) of %s: built before (%s)", b.Rev.Name, b.Rev.Rev, Short(b.Rev.Commit), p.ImportPath, bin)
			b.Bin, b.Cached = bin, true
			return nil
		}
	}
	w.say("building %s %s (%s) of %s", b.Rev.Name, b.Rev.Rev, Short(b.Rev.Commit), p.ImportPath)
	b.Bin = filepath.Join(w.Dir, b.Rev.Name)
	if err := BuildProgram(b.ModDir, p.PkgRel, b.Bin, ""); err != nil {
		return err
	}
	if cacheable {
		if bin, err := w.Cache.put(key, b.Bin, b.Rev.Commit+" "+p.ImportPath); err == nil {
			b.Bin = bin
		} else {
			w.say("build cache: %v (the build is used uncached)", err)
		}
	}
	return nil
}

// BuildPair builds the experiment, then the baseline, of program p; see
// BuildBase.
func (w *Workspace) BuildPair(p *Program, revs [2]Revision, cases []engine.Case) (base, head *Built, notes []string, err error) {
	return w.BuildBase(p, revs[0], &Built{Rev: revs[1]}, cases)
}

// BuildBase builds the baseline against head, building head first unless
// it is already built (its Bin and Benches set: this very program). When
// the baseline lacks the program or one of the planned cases'
// benchmarks, it builds the baseline's code with the experiment's
// benchmark declarations overlaid. The notes say what it did, and which
// benchmarks one side only declares.
func (w *Workspace) BuildBase(p *Program, baseRev Revision, head *Built, cases []engine.Case) (base, _ *Built, notes []string, err error) {
	base = &Built{Rev: baseRev}
	for _, b := range []*Built{head, base} {
		src, err := w.Checkout(b.Rev)
		if err != nil {
			return nil, nil, nil, err
		}
		b.ModDir = filepath.Join(src, p.ModuleRel)
		if b.Bin != "" {
			continue // this very program
		}
		if files, _ := goFiles(filepath.Join(b.ModDir, p.PkgRel), true); len(files) == 0 && b == base {
			continue // the baseline predates the program: overlaid below
		}
		if err := w.build(p, b, src); err != nil {
			return nil, nil, nil, fmt.Errorf("%s %s does not build: %v", b.Rev.Name, b.Rev.Rev, err)
		}
		if b.Benches, err = listBenchmarks(b.Bin); err != nil && b == head {
			return nil, nil, nil, err
		}
	}
	var reason string
	switch missing := missingIDs(cases, base); {
	case base.Bin == "":
		reason = "lacks the benchmark program " + p.ImportPath
	case base.Benches == nil:
		reason = "cannot list its benchmarks"
	case len(missing) > 0:
		reason = "lacks " + strings.Join(missing, ", ")
	}
	baseOnly := onlyIn(base.Benches, head.Benches)
	if reason != "" {
		if err := w.overlayBase(p, base, head, reason); err != nil {
			return nil, nil, nil, err
		}
		notes = append(notes, fmt.Sprintf("baseline %s %s: its code is measured with the experiment's benchmark declarations overlaid (%s)",
			Short(base.Rev.Commit), reason, strings.Join(base.Overlay, " ")))
	}
	if len(baseOnly) > 0 {
		notes = append(notes, "only in the baseline, not measured: "+strings.Join(baseOnly, ", "))
	}
	if headOnly := onlyIn(head.Benches, base.Benches); len(headOnly) > 0 {
		notes = append(notes, "only in the experiment, not measured: "+strings.Join(headOnly, ", "))
	}
	return base, head, notes, nil
}

// overlayBase builds the baseline's code with the experiment's benchmark
// declarations overlaid, because it lacks what reason says.
func (w *Workspace) overlayBase(p *Program, base, head *Built, reason string) error {
	replace, files, err := declarationOverlay(p, head.ModDir, base.ModDir)
	if err != nil {
		return err
	}
	path := filepath.Join(w.Dir, "overlay.json")
	if err := writeOverlay(path, replace); err != nil {
		return err
	}
	base.Bin, base.Overlay = filepath.Join(w.Dir, base.Rev.Name), files
	if err := BuildProgram(base.ModDir, p.PkgRel, base.Bin, path); err != nil {
		return fmt.Errorf("baseline %s %s, and does not build with the experiment's benchmark declarations overlaid: %v", base.Rev.Rev, reason, err)
	}
	base.Benches, err = listBenchmarks(base.Bin)
	return err
}

// missingIDs are the planned benchmarks that b does not declare.
func missingIDs(cases []engine.Case, b *Built) []string {
	var out []string
	for _, c := range cases {
		name := c.Bench.FullName()
		if !b.Has(c.Bench.ID()) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// onlyIn lists the benchmarks of a that b lacks.
func onlyIn(a, b []Listed) []string {
	var out []string
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y Listed) bool { return y.ID == x.ID }) {
			out = append(out, x.Name)
		}
	}
	return out
}

// Runnable keeps the cases whose benchmark every side declares.
func Runnable(cases []engine.Case, sides ...*Built) []engine.Case {
	var out []engine.Case
	for _, c := range cases {
		ok := true
		for _, s := range sides {
			ok = ok && s.Has(c.Bench.ID())
		}
		if ok {
			out = append(out, c)
		}
	}
	return out
}
