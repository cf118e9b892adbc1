package revision

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// TestPair is the packages' test binaries built at two revisions.
type TestPair struct {
	Sides []engine.Side // baseline, experiment
	Cases []engine.Case // the benchmarks both sides have
	// HeadCases counts the experiment's benchmarks that the patterns and
	// the selection match, whether or not the baseline has them.
	HeadCases int
	Notes     []string
	Broken    []string // "side: package" that did not build
}

// BuildTestPair builds the packages' test binaries at both revisions
// (the experiment first), each in its own tree with the same toolchain,
// and keeps the benchmarks both have. A baseline package that lacks a
// benchmark of the experiment's (one the change under review adds) is
// rebuilt with the experiment's _test.go files overlaid (go test
// -overlay), so the baseline's code is measured by the experiment's
// benchmarks; the notes say so. Benchmarks on one side only are listed.
// dir is the user's directory in the working tree; the packages are
// resolved from the same place in each revision's tree.
func (w *Workspace) BuildTestPair(ctx context.Context, dir string, revs [2]Revision, spec TestSpec, patterns []string) (*TestPair, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(w.Repo.Root, abs)
	if err != nil {
		return nil, err
	}
	var plans [2]*TestPlan // baseline, experiment
	for _, i := range []int{1, 0} {
		r := revs[i]
		src, err := w.Checkout(r)
		if err != nil {
			return nil, err
		}
		w.say("%s %s (%s):", r.Name, r.Rev, Short(r.Commit))
		tp, err := BuildPackages(ctx, filepath.Join(src, rel), w.Dir, r.Name+"-", spec, patterns, w.Say)
		switch {
		case err != nil && i == 1:
			return nil, err
		case err != nil:
			// The baseline predates the packages: nothing to measure there.
			w.say("baseline %s: %v", Short(r.Commit), err)
			tp = emptyPlan()
		}
		plans[i] = tp
	}
	return w.pairPlans(ctx, revs, plans[0], plans[1])
}

// pairPlans keeps the benchmarks both revisions' binaries have, after
// rebuilding a baseline package that lacks some with the experiment's
// test files overlaid.
func (w *Workspace) pairPlans(ctx context.Context, revs [2]Revision, base, head *TestPlan) (*TestPair, error) {
	tp := &TestPair{}
	var overlaid []string // baseline packages built with the experiment's tests
	defer func() {
		// A baseline package that built with the experiment's test files
		// is measured: it is neither broken nor "not run".
		for _, b := range base.Broken {
			if !slices.Contains(overlaid, b) {
				tp.Broken = append(tp.Broken, "baseline: "+b)
			}
		}
		for _, b := range head.Broken {
			tp.Broken = append(tp.Broken, "experiment: "+b)
		}
		var notes []string
		for _, n := range head.Notes {
			notes = append(notes, "experiment: "+n)
		}
		for _, n := range base.Notes {
			if !slices.ContainsFunc(overlaid, func(p string) bool { return n == p+" does not build: its benchmarks were not run" }) {
				notes = append(notes, "baseline: "+n)
			}
		}
		tp.Notes = append(notes, tp.Notes...)
	}()
	for i, pkg := range slices.Sorted(maps.Keys(head.Leaves)) {
		missing := without(head.Leaves[pkg], base.Leaves[pkg])
		bp, ok := base.pkgs[pkg]
		if len(missing) == 0 || !ok {
			continue
		}
		overlay, files, err := testOverlay(w.Dir, i, head.pkgs[pkg].Dir, head.pkgs[pkg].TestFiles, bp.Dir, bp.TestFiles)
		if err != nil {
			return nil, err
		}
		bin := filepath.Join(w.Dir, fmt.Sprintf("baseline-overlaid-%03d-%s.test", i, filepath.Base(pkg)))
		if err := base.build(ctx, bp, bin, overlay); err != nil {
			tp.Notes = append(tp.Notes, fmt.Sprintf("baseline %s lacks %s of %s and does not build with the experiment's test files overlaid: %v",
				Short(revs[0].Commit), strings.Join(missing, ", "), pkg, err))
			continue
		}
		what := "lacks " + strings.Join(missing, ", ") + " of " + pkg
		if slices.Contains(base.Broken, pkg) {
			what = pkg + " does not build with its own test files"
			overlaid = append(overlaid, pkg)
		}
		tp.Notes = append(tp.Notes, fmt.Sprintf("baseline %s %s: its code is measured with the experiment's test files overlaid (%s)",
			Short(revs[0].Commit), what, strings.Join(files, " ")))
	}
	var headOnly, baseOnly []string
	for _, pkg := range slices.Sorted(maps.Keys(head.Leaves)) {
		for _, n := range without(head.Leaves[pkg], base.Leaves[pkg]) {
			headOnly = append(headOnly, pkg+"."+n)
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(base.Leaves)) {
		for _, n := range without(base.Leaves[pkg], head.Leaves[pkg]) {
			baseOnly = append(baseOnly, pkg+"."+n)
		}
	}
	if len(baseOnly) > 0 {
		tp.Notes = append(tp.Notes, "only in the baseline, not measured: "+strings.Join(baseOnly, ", "))
	}
	if len(headOnly) > 0 {
		tp.Notes = append(tp.Notes, "only in the experiment, not measured: "+strings.Join(headOnly, ", "))
	}
	headCases := head.allCases()
	tp.HeadCases = len(headCases)
	for _, c := range headCases {
		if slices.Contains(base.Leaves[c.Test.Pkg], c.Test.Name) {
			tp.Cases = append(tp.Cases, c)
		}
	}
	tp.Sides = []engine.Side{{Name: "baseline", Launch: base.Bins}, {Name: "experiment", Launch: head.Bins}}
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
