package session

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/report"
)

// BisectSteps is the directory, in a bisection's output directory, of its
// steps' raw files.
const BisectSteps = "steps"

// resultFiles are the files a measuring command writes in its output
// directory.
var resultFiles = []string{"bench.txt", "bench.json", "ab.txt", "ab-confirm.txt", "aa.txt", "calibration.md", "calibration.json", "bisect.json", "bisect.md"}

// rootOut refuses the default output directory when the working
// directory is the file system's root.
const rootOut = "the working directory is /, where results/ would be made at the top of the file system: name the output directory with {Out}"

// holdsResults names a results file (a regular file: what a run wrote)
// that dir already holds, or the steps directory of a bisection (one
// interrupted before its report was written has only that).
func holdsResults(dir string) (string, bool) {
	for _, f := range resultFiles {
		if fi, err := os.Lstat(filepath.Join(dir, f)); err == nil && fi.Mode().IsRegular() {
			return f, true
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, BisectSteps)); err == nil && fi.IsDir() {
		return BisectSteps + "/", true
	}
	return "", false
}

// OutDir is out (--out), or results/<kind>/<UTC stamp> (-2, -3… when a run
// of the same second took it), proven writable (and so made) before
// anything is measured. An out that holds an earlier run's results is
// refused: they would be replaced.
func OutDir(out, kind string) (string, error) {
	if out == "" {
		if wd, err := os.Getwd(); err == nil && wd == "/" {
			return "", Input(rootOut)
		}
		stamp := filepath.Join("results", kind, time.Now().UTC().Format("20060102T150405Z"))
		out = stamp
		for i := 2; ; i++ {
			if _, taken := holdsResults(out); !taken {
				break
			}
			out = fmt.Sprintf("%s-%d", stamp, i)
		}
	} else if name, taken := holdsResults(out); taken {
		return "", Input("{Out} %s holds the results of an earlier run (%s): name another directory, or remove it first", out, name)
	}
	if err := report.CheckWritable(out); err != nil {
		return "", Input("{Out} %s: %w", out, err)
	}
	return out, nil
}
