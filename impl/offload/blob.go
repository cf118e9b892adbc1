package offload

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Blob is one stored object, read at offsets.
type Blob interface {
	io.ReaderAt
	Size() int64
	Close() error
}

// BlobStore stores objects by key.
type BlobStore interface {
	Put(key string, data []byte) error
	Open(key string) (Blob, error)
}

// FileStore is a BlobStore of files in a directory, written atomically.
type FileStore struct{ Dir string }

func (s *FileStore) path(key string) (string, error) {
	if key == "" || strings.ContainsAny(key, "/\\") || key == "." || key == ".." {
		return "", fmt.Errorf("bad blob key %q", key)
	}
	return filepath.Join(s.Dir, key), nil
}

func (s *FileStore) Put(key string, data []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

type fileBlob struct {
	*os.File
	size int64
}

func (b fileBlob) Size() int64 { return b.size }

func (s *FileStore) Open(key string) (Blob, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return fileBlob{f, st.Size()}, nil
}

// Offload writes a ledger's data and index objects as key and key.index.
func Offload(store BlobStore, key string, ledgerID int64, entries [][]byte, blockSize int) error {
	data, ix, err := Write(ledgerID, entries, blockSize)
	if err != nil {
		return err
	}
	b, _ := ix.MarshalBinary()
	if err := store.Put(key, data); err != nil {
		return err
	}
	return store.Put(key+".index", b)
}
