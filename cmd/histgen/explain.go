package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ledgerbench/ledgerbench/internal/calibrate"
	"github.com/ledgerbench/ledgerbench/internal/explain"
	"github.com/ledgerbench/ledgerbench/internal/histgen"
)

// explainTruth is what the explain fixture's history holds.
type explainTruth struct {
	Commits []string               `json:"commits"` // the good end, the plants, the A/A commits
	Plants  []histgen.FixturePlant `json:"plants"`
	AA      int                    `json:"aa"`
}

// explainWrite writes the explain fixture (histgen.ExplainFixture) into
// --dir, its truth into DIR.truth.json, and prints one line per commit to
// compare with the good end: its number, hash and planted function
// ("-" for an A/A commit).
func explainWrite(args []string) error {
	fs := flag.NewFlagSet("explain", flag.ExitOnError)
	dir := fs.String("dir", "", "the repository to write (must not exist)")
	aa := fs.Int("aa", 20, "A/A commits: the good end's code again")
	fs.Parse(args)
	harness, err := newHistory(*dir)
	if err != nil {
		return err
	}
	sources, subjects := histgen.ExplainFixture(histgen.ExplainPlants, *aa)
	s := histgen.Spec{Commits: len(sources) - 1, Sources: sources, Subjects: subjects, Harness: harness}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	cs, err := histgen.Write(*dir, s)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(explainTruth{Commits: cs, Plants: histgen.ExplainPlants, AA: *aa}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Clean(*dir)+".truth.json", append(b, '\n'), 0o644); err != nil {
		return err
	}
	for i, c := range cs[1:] {
		fn := "-"
		if i < len(histgen.ExplainPlants) {
			fn = histgen.ExplainPlants[i].Function
		}
		fmt.Println(i+1, c, fn)
	}
	return nil
}

// explainSummary reads TRUTH.json and the runs' explanations, RUNS/N/
// explain/*/explain.json for commit N, and prints each plant's outcome
// and the rates: planted function named first, A/A comparisons with any
// function named, with their 95 % Clopper–Pearson intervals.
func explainSummary(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: histgen explain-summary TRUTH.json RUNS")
	}
	var t explainTruth
	b, err := os.ReadFile(args[0])
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", args[0], err)
	}
	fmt.Println("| commit | planted | row change (CPU) | named, first three | planted named first |")
	fmt.Println("|--:|---|--:|---|:-:|")
	first, plantRuns, aaNamed, aaRuns, absent := 0, 0, 0, 0, 0
	for n := 1; n < len(t.Commits); n++ {
		// A directory may hold a part of the fixture's commits (more A/A
		// comparisons of a fixture written again): the others are left out.
		run := filepath.Join(args[1], fmt.Sprint(n))
		if _, err := os.Stat(run); errors.Is(err, fs.ErrNotExist) {
			absent++
			continue
		}
		r, err := readExplained(run)
		if err != nil {
			return err
		}
		planted := "A/A"
		if n <= len(t.Plants) {
			p := t.Plants[n-1]
			planted = fmt.Sprintf("loop %d ×%g in %s", p.Loop, p.Factor, p.Function)
		}
		var named []string
		for _, f := range r.Functions {
			if f.Named && len(named) < 3 {
				named = append(named, fmt.Sprintf("%s %+.1f ns/op", f.Name, f.Flat.Mean))
			}
		}
		hit := ""
		switch {
		case n > len(t.Plants):
			aaRuns++
			if len(named) > 0 {
				aaNamed++
			}
		case len(named) > 0 && strings.HasPrefix(named[0], t.Plants[n-1].Function+" "):
			first++
			hit = "yes"
		default:
			hit = "no"
		}
		if n <= len(t.Plants) {
			plantRuns++
		}
		fmt.Printf("| %d | %s | %+.1f %% | %s | %s |\n", n, planted, 100*r.Total.Mean/r.Base, strings.Join(named, "; "), hit)
	}
	fmt.Println()
	if absent > 0 {
		fmt.Printf("%d of the fixture's %d commits have no run here\n", absent, len(t.Commits)-1)
	}
	if plantRuns > 0 {
		lo, hi := calibrate.ClopperPearson(first, plantRuns, 0.95)
		fmt.Printf("planted function named first: %d of %d (%.0f %% [%.0f, %.0f])\n", first, plantRuns, 100*float64(first)/float64(plantRuns), 100*lo, 100*hi)
	}
	lo, hi := calibrate.ClopperPearson(aaNamed, aaRuns, 0.95)
	fmt.Printf("A/A comparisons with a function named: %d of %d (%.0f %% [%.0f, %.0f])\n", aaNamed, aaRuns, 100*float64(aaNamed)/float64(max(aaRuns, 1)), 100*lo, 100*hi)
	return nil
}

// readExplained is the one row explained in a run's directory.
func readExplained(run string) (explain.ReportJSON, error) {
	var r explain.ReportJSON
	paths, _ := filepath.Glob(filepath.Join(run, "explain", "*", explain.JSONFile))
	if len(paths) != 1 {
		return r, fmt.Errorf("%s: %d explanations, want the fixture's one row", run, len(paths))
	}
	b, err := os.ReadFile(paths[0])
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	return r, err
}
