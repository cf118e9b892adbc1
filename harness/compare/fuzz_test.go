package compare_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/history"
)

// FuzzResultFile: any bytes given as a results file to compare and to the
// nightly history are tables, warnings or an error, never a panic.
func FuzzResultFile(f *testing.F) {
	f.Add([]byte("BenchmarkX 1 10 ns/op\nBenchmarkX 1 11 ns/op\n"))
	f.Add([]byte("pkg: x\nBenchmarkX/a=1-2 10 NaN ns/op 3 B/op\nUnit ns/op assume=exact\n"))
	f.Add([]byte{0, 0xff, '\n'})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4<<10 {
			// Large inputs only make the statistics slow (an exact
			// Mann-Whitney U over thousands of samples), which the fuzzer's
			// deadline takes for a hang; the parser's paths are all in 4 KiB.
			return
		}
		p := filepath.Join(t.TempDir(), "bench.txt")
		os.WriteFile(p, b, 0o644)
		if ts, err := compare.Build([]string{p}, compare.Options{Col: "/impl"}); err == nil {
			ts.Markdown(discard{}, nil)
			ts.Text(discard{}, nil)
		}
		history.Load([]string{p})
	})
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
