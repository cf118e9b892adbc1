package fleet

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"
)

// PublishDir publishes what a package's tests read from their directory,
// dir, as go test runs them there: its regular files and its testdata
// tree (not its subdirectories, which are other packages), as a tar of
// sorted names with neither times nor owners, so one tree is one
// artifact. It returns the tar's hash.
func PublishDir(ctx context.Context, pool *pgxpool.Pool, dir string) (string, error) {
	data, err := tarDir(dir)
	if err != nil {
		return "", err
	}
	return publishBytes(ctx, pool, dir, data)
}

// tarDir is PublishDir's tar of dir.
func tarDir(dir string) ([]byte, error) {
	var names []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	err = filepath.WalkDir(filepath.Join(dir, "testdata"), func(p string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist) && p == filepath.Join(dir, "testdata"):
			return fs.SkipDir
		case err != nil:
			return err
		case d.Type().IsRegular():
			rel, err := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: int64(st.Mode().Perm()), Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
		if b.Len() > MaxArtifact {
			return nil, fmt.Errorf("%s: its files and testdata are over the fleet's %d MiB bound for an artifact", dir, MaxArtifact>>20)
		}
	}
	return b.Bytes(), tw.Close()
}

// FetchDir is the directory, in the cache directory cache, holding the
// tree whose tar hashes to hash (PublishDir): extracted once, from the
// fleet's database, after its bytes are checked. A tar the database
// lacks, whose bytes hash otherwise, or that names a path outside its
// directory or anything but a regular file, is ErrArtifact.
func FetchDir(ctx context.Context, pool *pgxpool.Pool, hash, cache string) (string, error) {
	dst := filepath.Join(cache, hash)
	if _, err := os.Stat(dst + ".done"); err == nil {
		return dst, nil
	}
	data, err := fetchBytes(ctx, pool, "package directory", hash)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, hash[:12]+".part-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := untar(data, tmp); err != nil {
		return "", fmt.Errorf("package directory %.12s: %w", hash, err)
	}
	os.RemoveAll(dst) // an extraction interrupted before its .done
	if err := os.Rename(tmp, dst); err != nil {
		return "", err
	}
	return dst, os.WriteFile(dst+".done", nil, 0o644)
}

// untar writes the regular files of the tar data under dir.
func untar(data []byte, dir string) error {
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrArtifact, err)
		}
		if h.Typeflag != tar.TypeReg || !filepath.IsLocal(filepath.FromSlash(h.Name)) {
			return fmt.Errorf("%w: %q is not a file within the directory", ErrArtifact, h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fs.FileMode(h.Mode).Perm())
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}
