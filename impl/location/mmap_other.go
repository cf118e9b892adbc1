//go:build !unix

package location

import (
	"errors"
	"os"
)

// mappedFile is unused where the OS has no mmap: tables are read with
// the file's ReadAt.
type mappedFile struct{ *os.File }

func mapTable(*os.File, int64) (*mappedFile, error) {
	return nil, errors.New("no memory maps on this OS")
}
