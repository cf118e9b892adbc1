package revision

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProgramBuildsAreReproducible: one main package built from two
// directories (two worktrees of one commit) gives the same bytes, so a
// program is named by its hash whatever worktree built it: a fleet's
// coordinator started again publishes the same programs, and an A/A's
// two sides are one program.
func TestProgramBuildsAreReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program twice")
	}
	var bins [][]byte
	for _, name := range []string{"one", "two"} {
		dir := filepath.Join(t.TempDir(), name)
		os.MkdirAll(filepath.Join(dir, "cmd", "p"), 0o755)
		os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo 1.24\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "cmd", "p", "main.go"), []byte("package main\n\nfunc main() { panic(\"where\") }\n"), 0o644)
		bin := filepath.Join(dir, "bin")
		if err := BuildProgram(dir, filepath.Join("cmd", "p"), bin, ""); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		bins = append(bins, data)
	}
	if !bytes.Equal(bins[0], bins[1]) {
		t.Errorf("the same package built in two directories: %d and %d bytes that differ", len(bins[0]), len(bins[1]))
	}
}
