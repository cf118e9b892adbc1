package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
)

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers see the old file or the new one, never
// a part.
func WriteFileAtomic(path string, data []byte) error {
	if err := atomicfile.Replace(path, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// CheckWritable creates dir if needed and proves a file can be created in
// it, so a run fails before measuring rather than after.
func CheckWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".probe*")
	if err != nil {
		return fmt.Errorf("not writable: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// WriteRun writes DIR/bench.txt and DIR/bench.json for run.
func WriteRun(dir string, h Header, run *result.Run) error {
	var txt, js bytes.Buffer
	if err := WriteBenchfmt(&txt, h, run); err != nil {
		return fmt.Errorf("format bench.txt: %w", err)
	}
	if err := WriteJMH(&js, h, run); err != nil {
		return fmt.Errorf("format bench.json: %w", err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "bench.txt"), txt.Bytes()); err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, "bench.json"), js.Bytes())
}
