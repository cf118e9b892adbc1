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
// explain/*/explain.json for commit N (allocs.json, and instructions.json
// when the run counted instructions), and prints each plant's outcome and
// the rates of each method: planted function named first, A/A comparisons
// with any function named, with their 95 % Clopper–Pearson intervals.
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
	fmt.Println("| commit | planted | row change (CPU) | named by CPU, first three | named by allocations | first | row change (instructions) | named by instructions, first three | first |")
	fmt.Println("|--:|---|--:|---|---|:-:|--:|---|:-:|")
	var cpu, instr tally
	absent := 0
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
		planted, want := "A/A", plantWant{}
		if n <= len(t.Plants) {
			p := t.Plants[n-1]
			planted, want = p.String(), plantWant{p.Function, p.Allocates()}
		}
		row, err := summaryRow(run, r, want, &cpu, &instr)
		if err != nil {
			return err
		}
		fmt.Printf("| %d | %s | %s\n", n, planted, row)
	}
	fmt.Println()
	if absent > 0 {
		fmt.Printf("%d of the fixture's %d commits have no run here\n", absent, len(t.Commits)-1)
	}
	cpu.print("CPU profiles")
	instr.print("instructions")
	return nil
}

// plantWant is what a comparison should name: the planted function
// (none for an A/A), and whether the plant adds allocations, which the
// row's allocation report names whichever method explains its time.
type plantWant struct {
	function  string
	allocates bool
}

// summaryRow is a run's cells after its planted function: each method's
// change, named functions and whether it named want first, counted in
// cpu and instr. An allocation plant is named first when the method, or
// the allocation report beside it, names its function first.
func summaryRow(run string, r explain.ReportJSON, want plantWant, cpu, instr *tally) (string, error) {
	var named []string
	for _, f := range r.Functions {
		if f.Named && len(named) < 3 {
			named = append(named, fmt.Sprintf("%s %+.1f ns/op", f.Name, f.Flat.Mean))
		}
	}
	allocs, err := readAllocs(run)
	if err != nil {
		return "", err
	}
	row := fmt.Sprintf("%+.1f %% | %s | %s | %s |", 100*r.Total.Mean/r.Base, strings.Join(named, "; "), strings.Join(allocs, "; "), cpu.add(want, named, allocs))
	in, ok, err := readInstructions(run)
	if err != nil || !ok {
		return row + " | | |", err
	}
	named = nil
	for _, f := range in.Named() {
		if len(named) < 3 {
			named = append(named, fmt.Sprintf("%s %+.0f instr/op", f.Name, f.Flat))
		}
	}
	return row + fmt.Sprintf(" %+.1f %% | %s | %s |", 100*(in.Exp-in.Base)/in.Base, strings.Join(named, "; "), instr.add(want, named, allocs)), nil
}

// tally counts one method's outcomes: plants whose function it named
// first, and A/A comparisons in which it named any (by allocations
// too).
type tally struct{ first, plants, aaNamed, aa int }

// add counts one comparison, of a plant want (none for an A/A), whose
// named functions are named and named by allocations allocs ("name
// change" each), and returns the row's mark.
func (t *tally) add(want plantWant, named, allocs []string) string {
	if want.function == "" {
		t.aa++
		if len(named)+len(allocs) > 0 {
			t.aaNamed++
		}
		return ""
	}
	t.plants++
	first := func(names []string) bool { return len(names) > 0 && strings.HasPrefix(names[0], want.function+" ") }
	if first(named) || want.allocates && first(allocs) {
		t.first++
		return "yes"
	}
	return "no"
}

func (t *tally) print(method string) {
	if t.plants+t.aa == 0 {
		return
	}
	if t.plants > 0 {
		lo, hi := calibrate.ClopperPearson(t.first, t.plants, 0.95)
		fmt.Printf("%s: planted function named first: %d of %d (%.0f %% [%.0f, %.0f])\n", method, t.first, t.plants, 100*float64(t.first)/float64(t.plants), 100*lo, 100*hi)
	}
	lo, hi := calibrate.ClopperPearson(t.aaNamed, t.aa, 0.95)
	fmt.Printf("%s: A/A comparisons with a function named: %d of %d (%.0f %% [%.0f, %.0f])\n", method, t.aaNamed, t.aa, 100*float64(t.aaNamed)/float64(max(t.aa, 1)), 100*lo, 100*hi)
}

// readInstructions is the row's explanation by instructions in a run's
// directory, when the run counted them.
func readInstructions(run string) (*explain.InstructionsReport, bool, error) {
	paths, _ := filepath.Glob(filepath.Join(run, "explain", "*", explain.InstructionsJSONFile))
	if len(paths) == 0 {
		return nil, false, nil
	}
	var r explain.InstructionsReport
	b, err := os.ReadFile(paths[0])
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	return &r, err == nil, err
}

// readAllocs is the functions the row's allocation report names ("name
// change" each), when the run has one.
func readAllocs(run string) ([]string, error) {
	paths, _ := filepath.Glob(filepath.Join(run, "explain", "*", explain.AllocsJSONFile))
	if len(paths) == 0 {
		return nil, nil
	}
	var r explain.AllocsReport
	b, err := os.ReadFile(paths[0])
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	var named []string
	for _, f := range r.Named() {
		named = append(named, fmt.Sprintf("%s %+.2f allocs/op", f.Name, f.Objects))
	}
	return named, err
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
