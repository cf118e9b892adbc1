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
	"os"
	"slices"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/internal/calibrate"
	"github.com/ledgerbench/ledgerbench/internal/verdict"
)

// tally is one row's verdicts over the files.
type tally struct {
	files, changed, slower, same, unknown int
}

func main() {
	alpha := flag.Float64("alpha", 0.05, "significance level, as ab's --alpha")
	minChange := flag.Float64("min-change", compare.DefaultMinChange, "the verdicts' margin in percent, as ab's --min-change")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: abtally [--alpha A] [--min-change P] ab.txt...")
		os.Exit(2)
	}
	rows := map[string]*tally{}
	var order []string
	anyChanged := 0
	for _, p := range flag.Args() {
		ts, err := compare.Build([]string{p}, compare.ABOptions(*alpha, *minChange))
		if err != nil {
			fmt.Fprintln(os.Stderr, "abtally:", err)
			os.Exit(1)
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
				name := row.StringValues()
				if rows[name] == nil {
					rows[name] = &tally{}
					order = append(order, name)
				}
				r := rows[name]
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
			anyChanged++
		}
	}
	slices.Sort(order)
	fmt.Printf("%d files decided as ab decides them (α = %g, margin ±%g %%).\n\n", flag.NArg(), *alpha, *minChange)
	fmt.Println("| row (sec/op) | files | changed | 95 % interval | of which slower | same | unknown |")
	fmt.Println("|:--|--:|--:|--:|--:|--:|--:|")
	for _, name := range order {
		r := rows[name]
		lo, hi := calibrate.ClopperPearson(r.changed, r.files, 0.95)
		fmt.Printf("| %s | %d | %d (%.1f %%) | [%.1f, %.1f] %% | %d | %d | %d |\n", name, r.files, r.changed, 100*float64(r.changed)/float64(r.files), 100*lo, 100*hi, r.slower, r.same, r.unknown)
	}
	lo, hi := calibrate.ClopperPearson(anyChanged, flag.NArg(), 0.95)
	fmt.Printf("\nFiles with any row changed: %d of %d, [%.1f, %.1f] %%.\n", anyChanged, flag.NArg(), 100*lo, 100*hi)
}
