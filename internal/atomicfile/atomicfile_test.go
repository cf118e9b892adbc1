package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, s := range []string{"one", "two"} {
		if err := Replace(path, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != s {
			t.Fatalf("content %q, want %q", got, s)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("%d files left, want only the target", len(es))
	}
	if err := Replace(filepath.Join(dir, "missing", "f"), nil); err == nil {
		t.Fatal("a write into a missing directory succeeded")
	}
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := WriteSync(filepath.Join(dir, "g"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "g")); string(got) != "x" {
		t.Fatalf("WriteSync wrote %q", got)
	}
}
