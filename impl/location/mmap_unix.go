//go:build unix

package location

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"syscall"
)

// mappedFile is a table file read through a read-only shared memory map.
// A block read is a copy out of the mapping, without a system call or the
// kernel's page-by-page copy: with pread, half of a partitioned get's time
// at 8 MiB of cache went to the kernel, and reading through the map took
// the location suite's Get from 70.9k to 150.6k gets/s (the full filter's,
// which copies 1.4 MB a get, from 7.6k to 14.4k; benchctl ab on an AMD
// EPYC VM, 6 rounds). Tables are immutable, and a table is closed
// (unmapped) only when no read can reach it (Store's lock), so a read
// never sees the mapping change. A fault on the mapping (the file cut
// short under it, or a failing disk) is returned as an error, not a
// crash. Blocks copied out do not point into the mapping.
type mappedFile struct {
	data []byte
}

// mapTable maps the first size bytes of f, which may then be closed.
func mapTable(f *os.File, size int64) (*mappedFile, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("cannot map %d bytes", size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", f.Name(), err)
	}
	return &mappedFile{data: data}, nil
}

// ReadAt copies the mapping's bytes from off into p, as a file's ReadAt
// reads them (io.EOF when fewer than len(p) remain).
func (m *mappedFile) ReadAt(p []byte, off int64) (n int, err error) {
	if off < 0 || off > int64(len(m.data)) {
		return 0, fmt.Errorf("read at offset %d of a %d-byte mapping", off, len(m.data))
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("read at offset %d of the mapped table: %v", off, r)
		}
	}()
	n = copy(p, m.data[off:])
	if n < len(p) {
		err = io.EOF
	}
	return n, err
}

// Close unmaps the file.
func (m *mappedFile) Close() error {
	if m.data == nil {
		return nil
	}
	err := syscall.Munmap(m.data)
	m.data = nil
	return err
}
