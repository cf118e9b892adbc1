package revision

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFirstParentsIsTheRangeOldestFirst(t *testing.T) {
	r, c := repo(t)
	cs, err := r.FirstParents(c[0], c[1])
	if err != nil || len(cs) != 1 || cs[0].Hash != c[1] || cs[0].Subject != "b" || cs[0].Date.IsZero() {
		t.Fatalf("%+v %v", cs, err)
	}
	var ue *UsageError
	for _, bad := range [][2]string{{c[1], c[0]}, {c[0], c[0]}} {
		if _, err := r.FirstParents(bad[0], bad[1]); !errors.As(err, &ue) {
			t.Errorf("FirstParents(%.7s, %.7s): %v, want a usage error", bad[0], bad[1], err)
		}
	}
	if p := r.Parent(c[1]); p != c[0] {
		t.Errorf("Parent = %q, want %s", p, c[0])
	}
	if p := r.Parent(c[0]); p != "" {
		t.Errorf("Parent of the root = %q", p)
	}
	d, err := r.Describe(c[0])
	if err != nil || d.Hash != c[0] || d.Subject != "a" {
		t.Errorf("Describe: %+v %v", d, err)
	}
}

func TestBuildCacheKeysByTreeAndRefusesOutsideReplacements(t *testing.T) {
	r, c := repo(t)
	os.WriteFile(filepath.Join(r.Root, "go.mod"), []byte("module m\n\ngo 1.24\n"), 0o644)
	cache := &BuildCache{Dir: t.TempDir()}
	p := &Program{ModuleRel: ".", PkgRel: "cmd/x"}
	rev := func(i int) Revision { return Revision{Name: "baseline", Commit: c[i]} }
	k0, ok0 := cache.key(r, rev(0), p, r.Root, r.Root)
	k1, ok1 := cache.key(r, rev(1), p, r.Root, r.Root)
	if !ok0 || !ok1 || k0 == k1 {
		t.Fatalf("keys %q %v, %q %v: want two different cacheable keys", k0, ok0, k1, ok1)
	}
	if again, _ := cache.key(r, rev(0), p, r.Root, r.Root); again != k0 {
		t.Errorf("the key of one tree changed: %q then %q", k0, again)
	}
	if _, ok := cache.key(r, Revision{Commit: c[1], Tree: true}, p, r.Root, r.Root); ok {
		t.Error("the working tree was cacheable")
	}
	if _, ok := (*BuildCache)(nil).key(r, rev(0), p, r.Root, r.Root); ok {
		t.Error("no cache, yet a key")
	}
	os.WriteFile(filepath.Join(r.Root, "go.mod"), []byte("module m\n\ngo 1.24\n\nreplace example.com/y => ../elsewhere\n"), 0o644)
	if _, ok := cache.key(r, rev(0), p, r.Root, r.Root); ok {
		t.Error("a module replaced by a directory outside the tree was cacheable")
	}
	os.WriteFile(filepath.Join(r.Root, "go.mod"), []byte("module m\n\ngo 1.24\n\nreplace example.com/y => ./vendored/y\n"), 0o644)
	if _, ok := cache.key(r, rev(0), p, r.Root, r.Root); !ok {
		t.Error("a replacement inside the tree was not cacheable")
	}
	// put then get; a failed put leaves nothing.
	bin := filepath.Join(t.TempDir(), "bin")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	got, err := cache.put(k0, bin, "what")
	if err != nil {
		t.Fatal(err)
	}
	if hit, ok := cache.get(k0); !ok || hit != got {
		t.Errorf("get after put: %q %v, want %q", hit, ok, got)
	}
	if _, err := cache.put(k1, filepath.Join(t.TempDir(), "missing"), "what"); err == nil {
		t.Error("put of a missing binary succeeded")
	}
	if _, ok := cache.get(k1); ok {
		t.Error("a failed put left an entry")
	}
}

// TestMerged: a merge commit names the range of the branch it merged
// (the merge base and the branch's tip); a commit of one parent does not.
func TestMerged(t *testing.T) {
	r, c := repo(t)
	run := func(args ...string) string {
		t.Helper()
		out, err := Git(r.Root, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	run("checkout", "-q", "-b", "side", c[0])
	os.WriteFile(filepath.Join(r.Root, "g.txt"), []byte("side"), 0o644)
	run("add", ".")
	run("commit", "-q", "-m", "side")
	tip := run("rev-parse", "HEAD")
	run("checkout", "-q", c[1])
	run("merge", "-q", "--no-ff", "-m", "merge side", tip)
	merge := run("rev-parse", "HEAD")
	if base, got, ok := r.Merged(merge); !ok || base != c[0] || got != tip {
		t.Errorf("Merged(merge) = %.7s %.7s %v, want %.7s %.7s", base, got, ok, c[0], tip)
	}
	if _, _, ok := r.Merged(c[1]); ok {
		t.Error("a commit of one parent is a merge")
	}
}
