package revision

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSourceReadsEachRevisionsFile: a file named as a -trimpath build
// names it (the module's path first, or "./" before it) is read at each
// commit, and from the working tree; an absolute path is read as it is; a
// file the repository does not hold is an error.
func TestSourceReadsEachRevisionsFile(t *testing.T) {
	r, c := repo(t)
	for i, want := range []string{"a", "b"} {
		src := r.Source(Revision{Commit: c[i]})
		for _, name := range []string{"f.txt", "example.com/mod/f.txt", "./mod/f.txt"} {
			if b, err := src(name); err != nil || string(b) != want {
				t.Errorf("commit %d, %s: %q, %v; want %q", i, name, b, err, want)
			}
		}
		if _, err := src("runtime/proc.go"); err == nil {
			t.Errorf("commit %d: a file outside the repository was read", i)
		}
	}
	os.WriteFile(filepath.Join(r.Root, "f.txt"), []byte("tree"), 0o644)
	if b, err := r.Source(Revision{Commit: c[1], Tree: true})("mod/f.txt"); err != nil || string(b) != "tree" {
		t.Errorf("the working tree: %q, %v", b, err)
	}
	abs := filepath.Join(t.TempDir(), "g.go")
	os.WriteFile(abs, []byte("abs"), 0o644)
	if b, err := r.Source(Revision{Commit: c[0]})(abs); err != nil || string(b) != "abs" {
		t.Errorf("an absolute path: %q, %v", b, err)
	}
}
