package atomicfile

import (
	"os"
	"path/filepath"
)

// WriteSync creates or truncates path, writes data and fsyncs it.
func WriteSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Replace writes data to a temporary file in path's directory (named
// ".<base>.tmp…"), fsyncs it and renames it over path, so readers see the
// old file or the new one, never a part. On error the temporary file is
// removed. The rename is durable once the directory is synced (SyncDir).
func Replace(path string, data []byte) error { return ReplacePerm(path, data, 0o644) }

// ReplacePerm is Replace of a file with permissions perm, which the data
// has from the start (a file of secrets is never readable by others).
func ReplacePerm(path string, data []byte, perm os.FileMode) error {
	tmp, err := tempPerm(path, data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Temp writes data, fsynced, to a new temporary file beside path (named
// ".<base>.tmp…") and returns its name, for the caller to rename or link
// into place. On error nothing is left behind.
func Temp(path string, data []byte) (string, error) { return tempPerm(path, data, 0o644) }

// tempPerm is Temp of a file with permissions perm (CreateTemp makes it
// 0600, and only then it is widened).
func tempPerm(path string, data []byte, perm os.FileMode) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && perm != 0o600 {
		err = os.Chmod(tmp, perm)
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// CreateNew writes data to path only if no file is there, atomically: the
// data is written and synced under a temporary name and then hard-linked
// to path, which fails with an error satisfying errors.Is(err,
// fs.ErrExist) when path exists. An existing file is never replaced.
func CreateNew(path string, data []byte) error {
	tmp, err := Temp(path, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// RemoveTemps removes the temporary files that Temp made beside path and
// that an interrupted writer left behind.
func RemoveTemps(path string) {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp*"))
	for _, f := range old {
		os.Remove(f)
	}
}

// SyncDir fsyncs a directory, making the renames and creations in it
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
