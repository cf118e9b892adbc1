package fleet

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPackageDirectoryArtifact: a package's directory ships its own
// files and its testdata tree, with their modes, not its subpackages or
// links; the same tree is the same bytes whatever the files' times; a
// tar naming a path outside its directory, or a link, is refused.
func TestPackageDirectoryArtifact(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"work_test.go": "package work\n", "run.sh": "#!/bin/sh\n", "testdata/rounds.txt": "64\n", "testdata/deep/x.bin": "\x00\x01"}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "sub.go"), []byte("package sub\n"), 0o644)
	os.Symlink("work_test.go", filepath.Join(dir, "link.go"))
	first, err := tarDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "testdata", "rounds.txt"), time.Now(), time.Now().Add(time.Hour))
	if again, _ := tarDir(dir); !bytes.Equal(first, again) {
		t.Error("the same tree made another tar")
	}
	out := t.TempDir()
	if err := untar(first, out); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
		if err != nil || string(got) != text {
			t.Errorf("%s: %q, %v; want %q", name, got, err, text)
		}
	}
	if st, err := os.Stat(filepath.Join(out, "run.sh")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("run.sh's mode: %v, %v", st, err)
	}
	for _, absent := range []string{"sub", "link.go"} {
		if _, err := os.Lstat(filepath.Join(out, absent)); err == nil {
			t.Errorf("%s was shipped", absent)
		}
	}
	for _, h := range []tar.Header{
		{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "/etc/evil", Typeflag: tar.TypeReg, Mode: 0o644},
		{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
	} {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		tw.WriteHeader(&h)
		tw.Close()
		if err := untar(b.Bytes(), t.TempDir()); !errors.Is(err, ErrArtifact) {
			t.Errorf("%s (%c): %v, want it refused", h.Name, h.Typeflag, err)
		}
	}
}

// TestFetchDirChecksAndKeeps: a published directory is fetched once,
// checked, and kept; one the database lacks is ErrArtifact.
func TestFetchDirChecksAndKeeps(t *testing.T) {
	pool := fleetDB(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "testdata"), 0o755)
	os.WriteFile(filepath.Join(dir, "testdata", "rounds.txt"), []byte("256\n"), 0o644)
	hash, err := PublishDir(t.Context(), pool, dir)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	got, err := FetchDir(t.Context(), pool, hash, cache)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(got, "testdata", "rounds.txt")); err != nil || string(data) != "256\n" {
		t.Errorf("fetched: %q, %v", data, err)
	}
	if _, err := pool.Exec(t.Context(), `DELETE FROM benchctl_fleet_artifact WHERE sha256 = $1`, hash); err != nil {
		t.Fatal(err)
	}
	if again, err := FetchDir(t.Context(), pool, hash, cache); err != nil || again != got {
		t.Errorf("fetched again: %s, %v; want the kept %s", again, err, got)
	}
	if _, err := FetchDir(t.Context(), pool, hash, t.TempDir()); !errors.Is(err, ErrArtifact) {
		t.Errorf("a directory the database lacks: %v", err)
	}
}
