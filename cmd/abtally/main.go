// Command abtally decides A/B result files (ab.txt) as benchctl ab
// decides them, and counts their verdicts row by row: how many files
// called each row changed (and how many of those slower), same or
// unknown, with the exact 95 % binomial interval of the changed share.
// Run on repeated A/As (the same commit on both sides), the changed
// share is ab's false-positive rate; on a known change, its power.
//
//	abtally [--alpha 0.05] [--min-change 1] DIR/ab.txt...
//
// Each file is read through compare.Build under compare.ABOptions: the
// function that decided the rows ab printed when it wrote the file.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/calibrate"
)

// tally is one row's verdicts over the files.
type tally struct {
	files, changed, slower, same, unknown int
}

func main() {
	alpha := flag.Float64("alpha", compare.DefaultAlpha, "significance level, as ab's --alpha")
	minChange := flag.Float64("min-change", compare.DefaultMinChange, "the verdicts' margin in percent, as ab's --min-change")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: abtally [--alpha A] [--min-change P] ab.txt...")
		os.Exit(2)
	}
	rows, withChange, err := count(flag.Args(), compare.ABOptions(*alpha, *minChange))
	if err != nil {
		fmt.Fprintln(os.Stderr, "abtally:", err)
		os.Exit(1)
	}
	fmt.Printf("%d files decided as ab decides them (α = %g, margin ±%g %%).\n\n", flag.NArg(), *alpha, *minChange)
	fmt.Println("| row (sec/op) | files | changed | 95 % interval | of which slower | same | unknown |")
	fmt.Println("|:--|--:|--:|--:|--:|--:|--:|")
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		r := rows[name]
		lo, hi := calibrate.ClopperPearson(r.changed, r.files, 0.95)
		fmt.Printf("| %s | %d | %d (%.1f %%) | [%.1f, %.1f] %% | %d | %d | %d |\n", name, r.files, r.changed, 100*float64(r.changed)/float64(r.files), 100*lo, 100*hi, r.slower, r.same, r.unknown)
	}
	lo, hi := calibrate.ClopperPearson(withChange, flag.NArg(), 0.95)
	fmt.Printf("\nFiles with withChange row changed: %d of %d, [%.1f, %.1f] %%.\n", withChange, flag.NArg(), 100*lo, 100*hi)
}

// count decides every file's sec/op rows under o and tallies their
// verdicts by row; withChange counts the files with a row changed.
func count(paths []string, o compare.Options) (rows map[string]*tally, withChange int, err error) {
	rows = map[string]*tally{}
	for _, p := range paths {
		ts, err := compare.Build([]string{p}, o)
		if err != nil {
			return nil, 0, err
		}
		changed := false
		for _, t := range ts.Tables {
			if t.Unit != "sec/op" || len(t.Cols) < 2 {
				continue
			}
			for _, row := range t.Rows {
				d := t.Decision(row, t.Cols[1])
				if d == nil || d.Err != nil {
					continue
				}
				r := rows[row.StringValues()]
				if r == nil {
					r = &tally{}
					rows[row.StringValues()] = r
				}
				r.files++
				switch d.Verdict {
				case verdict.Changed:
					r.changed++
					changed = true
					if d.Worse {
						r.slower++
					}
				case verdict.Same:
					r.same++
				default:
					r.unknown++
				}
			}
		}
		if changed {
			withChange++
		}
	}
	return rows, withChange, nil
}
