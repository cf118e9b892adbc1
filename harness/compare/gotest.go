package compare

import (
	"io"

	"golang.org/x/perf/benchfmt"
)

// goTestKeys are the configuration keys go test -bench writes.
var goTestKeys = map[string]bool{"goos": true, "goarch": true, "pkg": true, "cpu": true}

// GoTest writes the results of the files at paths as go test -bench
// writes them, so that benchstat puts them in one table with a plain go
// test file of the same benchmarks on the same machine: the keys go test
// writes (goos, goarch, pkg, cpu), any other key only where its value
// varies within one file (an A/B file's toolchain, which tells its sides
// apart), every result line with its units, and no comment lines. A file
// that benchfmt cannot read is an error naming it and its line.
func GoTest(w io.Writer, paths []string) error {
	var recs []benchfmt.Record
	varies := map[string]bool{}
	for _, p := range paths {
		seen := map[string]string{}
		r := &benchfmt.Files{Paths: []string{p}}
		for r.Scan() {
			switch rec := r.Result().(type) {
			case *benchfmt.SyntaxError:
				return rec
			case *benchfmt.Result:
				for _, c := range rec.Config {
					if v, ok := seen[c.Key]; ok && v != string(c.Value) {
						varies[c.Key] = true
					}
					seen[c.Key] = string(c.Value)
				}
				recs = append(recs, rec.Clone())
			case *benchfmt.UnitMetadata:
				recs = append(recs, rec)
			}
		}
		if err := r.Err(); err != nil {
			return err
		}
	}
	bw := benchfmt.NewWriter(w)
	for _, rec := range recs {
		if res, ok := rec.(*benchfmt.Result); ok {
			kept := res.Config[:0]
			for _, c := range res.Config {
				if goTestKeys[c.Key] || varies[c.Key] {
					kept = append(kept, c)
				}
			}
			res.Config = kept
		}
		if err := bw.Write(rec); err != nil {
			return err
		}
	}
	return nil
}
