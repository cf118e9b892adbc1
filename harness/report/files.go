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

// WriteRun writes DIR/bench.txt and DIR/bench.json for run, as a pair:
// both are written under temporary names first; then the old bench.json
// is removed and the new files renamed into place, so no moment (a kill
// between the renames included) leaves a new bench.txt beside an old
// bench.json. When bench.txt fits and bench.json does not (a full disk),
// bench.txt is kept alone, without a stale bench.json, and the error says
// so. Temporary files of an interrupted earlier write are removed.
func WriteRun(dir string, h Header, run *result.Run) error {
	var txt, js bytes.Buffer
	if err := WriteBenchfmt(&txt, h, run); err != nil {
		return fmt.Errorf("format bench.txt: %w", err)
	}
	if err := WriteJMH(&js, h, run); err != nil {
		return fmt.Errorf("format bench.json: %w", err)
	}
	txtPath, jsPath := filepath.Join(dir, "bench.txt"), filepath.Join(dir, "bench.json")
	atomicfile.RemoveTemps(txtPath)
	atomicfile.RemoveTemps(jsPath)
	tmpTxt, err := atomicfile.Temp(txtPath, txt.Bytes())
	if err != nil {
		return fmt.Errorf("write %s: %w (nothing was written)", txtPath, err)
	}
	tmpJS, jsErr := atomicfile.Temp(jsPath, js.Bytes())
	if err := os.Remove(jsPath); err != nil && !os.IsNotExist(err) {
		os.Remove(tmpTxt)
		os.Remove(tmpJS)
		return fmt.Errorf("replace %s: %w (nothing was written)", jsPath, err)
	}
	if err := os.Rename(tmpTxt, txtPath); err != nil {
		os.Remove(tmpTxt)
		os.Remove(tmpJS)
		return fmt.Errorf("write %s: %w", txtPath, err)
	}
	if jsErr != nil {
		atomicfile.SyncDir(dir)
		return fmt.Errorf("write %s: %w (%s holds every result)", jsPath, jsErr, txtPath)
	}
	if err := os.Rename(tmpJS, jsPath); err != nil {
		os.Remove(tmpJS)
		return fmt.Errorf("write %s: %w (%s holds every result)", jsPath, err, txtPath)
	}
	return atomicfile.SyncDir(dir)
}
