package benchctl

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/gotest"
)

// testPair is what ab and nightly build of the packages' test binaries
// at two revisions.
type testPair struct {
	sides  []engine.Side
	cases  []engine.Case // the benchmarks both sides have
	notes  []string
	broken []string // "side: package" that did not build
}

// buildTestPair builds the packages' test binaries at both revisions
// (the experiment first), each in its own tree with the same toolchain,
// and keeps the benchmarks both have. A baseline package that lacks a
// benchmark of the experiment's (one the change under review adds) is
// rebuilt with the experiment's _test.go files overlaid (go test
// -overlay), so the baseline's code is measured by the experiment's
// benchmarks; the notes say so. Benchmarks on one side only are listed.
func (a *app) buildTestPair(ctx context.Context, root, work string, revs [2]revision, o engine.Options, patterns []string, cleanups *[]func()) (*testPair, error) {
	abs, err := filepath.Abs(a.srcDir())
	if err != nil {
		return nil, failedError{err.Error()}
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return nil, failedError{err.Error()}
	}
	var plans [2]*testPlan // baseline, experiment
	for _, i := range []int{1, 0} {
		r := revs[i]
		src := root
		if !r.tree {
			src = filepath.Join(work, r.name+"-src")
			if _, err := git(root, "worktree", "add", "--detach", src, r.commit); err != nil {
				return nil, failedError{err.Error()}
			}
			*cleanups = append(*cleanups, func() { _, _ = git(root, "worktree", "remove", "--force", src) })
		}
		a.say("%s %s (%s):", r.name, r.rev, shortCommit(r.commit))
		tp, err := a.buildPackages(ctx, filepath.Join(src, rel), work, r.name+"-", o, patterns)
		switch {
		case err != nil && i == 1:
			return nil, err
		case err != nil:
			// The baseline predates the packages: nothing to measure there.
			a.say("baseline %s: %v", shortCommit(r.commit), err)
			tp = &testPlan{leaves: map[string][]string{}, pkgs: map[string]gotest.Package{}, bins: map[string]engine.TestBinary{}}
		}
		plans[i] = tp
	}
	base, head := plans[0], plans[1]
	tp := &testPair{}
	for _, b := range base.broken {
		tp.broken = append(tp.broken, "baseline: "+b)
	}
	for _, b := range head.broken {
		tp.broken = append(tp.broken, "experiment: "+b)
	}
	tp.notes = append(tp.notes, head.notes...)
	for _, n := range base.notes {
		tp.notes = append(tp.notes, "baseline: "+n)
	}
	for i, pkg := range sortedKeys(head.leaves) {
		missing := without(head.leaves[pkg], base.leaves[pkg])
		bp, ok := base.pkgs[pkg]
		if len(missing) == 0 || !ok {
			continue
		}
		overlay, files, err := testOverlay(work, i, head.pkgs[pkg].Dir, head.pkgs[pkg].TestFiles, bp.Dir, bp.TestFiles)
		if err != nil {
			return nil, failedError{err.Error()}
		}
		bin := filepath.Join(work, fmt.Sprintf("baseline-overlaid-%03d-%s.test", i, filepath.Base(pkg)))
		if err := a.buildTest(ctx, base, bp, bin, overlay); err != nil {
			tp.notes = append(tp.notes, fmt.Sprintf("baseline %s lacks %s of %s and does not build with the experiment's test files overlaid: %v",
				shortCommit(revs[0].commit), strings.Join(missing, ", "), pkg, err))
			continue
		}
		tp.notes = append(tp.notes, fmt.Sprintf("baseline %s lacks %s of %s: its code is measured with the experiment's test files overlaid (%s)",
			shortCommit(revs[0].commit), strings.Join(missing, ", "), pkg, strings.Join(files, " ")))
	}
	var headOnly, baseOnly []string
	for _, pkg := range sortedKeys(head.leaves) {
		for _, n := range without(head.leaves[pkg], base.leaves[pkg]) {
			headOnly = append(headOnly, pkg+"."+n)
		}
	}
	for _, pkg := range sortedKeys(base.leaves) {
		for _, n := range without(base.leaves[pkg], head.leaves[pkg]) {
			baseOnly = append(baseOnly, pkg+"."+n)
		}
	}
	if len(baseOnly) > 0 {
		tp.notes = append(tp.notes, "only in the baseline, not measured: "+strings.Join(baseOnly, ", "))
	}
	if len(headOnly) > 0 {
		tp.notes = append(tp.notes, "only in the experiment, not measured: "+strings.Join(headOnly, ", "))
	}
	for _, c := range head.allCases() {
		if slices.Contains(base.leaves[c.Test.Pkg], c.Test.Name) {
			tp.cases = append(tp.cases, c)
		}
	}
	tp.sides = []engine.Side{{Name: "baseline", Tests: base.bins}, {Name: "experiment", Tests: head.bins}}
	return tp, nil
}

// testOverlay writes the go build -overlay file that gives the baseline's
// package directory the experiment's _test.go files (and none of its
// own that the experiment removed), and lists the files.
func testOverlay(work string, i int, headDir string, headFiles []string, baseDir string, baseFiles []string) (string, []string, error) {
	replace := map[string]string{}
	for _, f := range headFiles {
		replace[filepath.Join(baseDir, f)] = filepath.Join(headDir, f)
	}
	for _, f := range baseFiles {
		if !slices.Contains(headFiles, f) {
			replace[filepath.Join(baseDir, f)] = "" // deleted
		}
	}
	path := filepath.Join(work, fmt.Sprintf("test-overlay-%03d.json", i))
	if err := writeOverlay(path, replace); err != nil {
		return "", nil, err
	}
	files := slices.Clone(headFiles)
	slices.Sort(files)
	return path, files, nil
}

// without lists the elements of a that b lacks.
func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
