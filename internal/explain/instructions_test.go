package explain

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// TestCompareCountsKnownAnswers: of a 10,000-instruction op, hash grows
// by 300 and parse by 40 (0.4 %, under the floor); mix, inlined into
// encode, by 100; hash's changed line moved down two lines at the
// experiment (a comment above it), and is matched by its text.
func TestCompareCountsKnownAnswers(t *testing.T) {
	baseSrc := "package tiny\n\nfunc hash() {\n\tx ^= x >> 29\n\tx *= 3\n}\n"
	expSrc := "package tiny\n\n// hash mixes.\n//\nfunc hash() {\n\tx ^= x >> 29\n\tx *= 3\n}\n"
	src := func(text string) func(string) ([]byte, error) {
		return func(file string) ([]byte, error) {
			if file != "tiny/work.go" {
				return nil, fmt.Errorf("no %s", file)
			}
			return []byte(text), nil
		}
	}
	at := func(line int) SourceLine { return SourceLine{"tiny/work.go", line} }
	base := &Counted{Total: 10000,
		Flat:   map[string]float64{"tiny.hash": 4000, "tiny.parse": 2000, "tiny.mix": 800, "tiny.encode": 600, "tiny.Work": 2600},
		Cum:    map[string]float64{"tiny.hash": 4000, "tiny.parse": 2000, "tiny.mix": 800, "tiny.encode": 1400, "tiny.Work": 10000},
		Lines:  map[string]map[SourceLine]float64{"tiny.hash": {at(4): 1000, at(5): 3000}},
		Source: src(baseSrc)}
	exp := &Counted{Total: 10440,
		Flat:   map[string]float64{"tiny.hash": 4300, "tiny.parse": 2040, "tiny.mix": 900, "tiny.encode": 600, "tiny.Work": 2600},
		Cum:    map[string]float64{"tiny.hash": 4300, "tiny.parse": 2040, "tiny.mix": 900, "tiny.encode": 1500, "tiny.Work": 10440},
		Lines:  map[string]map[SourceLine]float64{"tiny.hash": {at(6): 1000, at(7): 3300}},
		Source: src(expSrc)}
	r := CompareCounts(base, exp)
	named := r.Named()
	if len(named) != 2 || named[0].Name != "tiny.hash" || named[1].Name != "tiny.mix" {
		t.Fatalf("named %+v, want tiny.hash then tiny.mix", named)
	}
	if h := named[0]; h.Flat != 300 || h.Cum != 300 || math.Abs(h.Share-300.0/440) > 1e-12 {
		t.Errorf("hash: %+v, want +300 flat and cum, share 300/440", h)
	}
	for _, f := range r.Functions {
		if f.Name == "tiny.encode" && (f.Named || f.Flat != 0 || f.Cum != 100) {
			t.Errorf("encode: %+v, want unnamed, flat 0, cum +100 (mix's)", f)
		}
		if f.Name == "tiny.parse" && f.Named {
			t.Errorf("parse's +40 of 10,000 is under the floor, and named: %+v", f)
		}
	}
	want := LineChange{Base: at(5), Exp: at(7), Text: "x *= 3", BaseCount: 3000, ExpCount: 3300}
	if len(r.Lines) != 1 || r.Lines[0] != want {
		t.Errorf("lines %+v, want only %+v (the unchanged line matched by its text and left out)", r.Lines, want)
	}
	if l := r.Line(3); l != "tiny.hash +300.0 instr/op (68 % of the change); tiny.mix +100.0 instr/op (23 % of the change)" {
		t.Errorf("line %q", l)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text, 10); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "work.go:5  work.go:7 ") {
		t.Errorf("the text report does not place the line at each revision:\n%s", text.String())
	}
	// Without the sources a line is matched by its file and number: the
	// moved line is two lines, one gone and one new.
	base.Source = func(string) ([]byte, error) { return nil, fmt.Errorf("gone") }
	exp.Source = base.Source
	if r := CompareCounts(base, exp); len(r.Lines) != 4 {
		t.Errorf("without sources, %d lines %+v; want 4 (two gone, two new)", len(r.Lines), r.Lines)
	}
	// A/A: nothing named, nothing changed.
	if r := CompareCounts(base, base); len(r.Named()) != 0 || len(r.Lines) != 0 || r.Change() != "+0.000 instr/op" {
		t.Errorf("A/A: %+v", r)
	}
}

// TestCountTakesTheDifferenceOfTwoRuns: a go test binary's runs at
// b.N = 10 and 20 each ran its setup once (500 instructions in setup),
// and hash 40 instructions an op: per op, hash is 40 and setup nothing.
// Addresses outside the program fall back to callgrind's names, without
// its recursion suffix.
func TestCountTakesTheDifferenceOfTwoRuns(t *testing.T) {
	dir := t.TempDir()
	file := func(n int) string {
		text := fmt.Sprintf("positions: instr line\nevents: Ir\nsummary: %d\nfl=(1) w.go\nfn=(1) tiny.setup'2\n0x10 1 500\nfn=(2) tiny.hash\n0x20 7 %d\n", 500+40*n, 40*n)
		path := filepath.Join(dir, fmt.Sprintf("callgrind.%dx.out", n))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pr := result.ProfileRun{Kind: "instructions", Exe: os.Args[0], Callgrind: []result.CallgrindFile{{Path: file(10), Ops: 10}, {Path: file(20), Ops: 20}}}
	c, err := Count(pr)
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != 40 || c.Flat["tiny.hash"] != 40 || c.Flat["tiny.setup"] != 0 || c.Cum["tiny.hash"] != 40 || c.Lines["tiny.hash"][SourceLine{"w.go", 7}] != 40 {
		t.Errorf("counted %+v, want 40 an op, all hash's, at w.go:7", c)
	}
	pr.Callgrind = pr.Callgrind[1:]
	if c, err := Count(pr); err != nil || c.Total != 65 || c.Flat["tiny.setup"] != 25 {
		t.Errorf("one run of 20 ops: %+v, %v; want 65 an op, 25 of it setup's", c, err)
	}
	pr.Callgrind = nil
	if _, err := Count(pr); err == nil {
		t.Error("no callgrind file, and no error")
	}
}

// TestCountNotesWhatItLacks: a program built without DWARF is counted by
// callgrind's symbols, and a stripped one by addresses; each says so.
func TestCountNotesWhatItLacks(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println(1) }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module lack\n\ngo 1.26\n"), 0o644)
	cg := filepath.Join(dir, "callgrind.out")
	os.WriteFile(cg, []byte("positions: instr line\nevents: Ir\nsummary: 10\nfl=(1) ???\nfn=(1) 0x0000000000401000\n0x401000 0 10\n"), 0o644)
	for flags, want := range map[string][]string{
		"-w":    {"no DWARF"},
		"-s -w": {"no DWARF", "no symbol table (stripped)"},
	} {
		exe := filepath.Join(dir, "lack")
		cmd := exec.Command("go", "build", "-ldflags="+flags, "-o", exe, ".")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, b)
		}
		c, err := Count(result.ProfileRun{Kind: "instructions", Exe: exe, Callgrind: []result.CallgrindFile{{Path: cg, Ops: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(c.Notes, "; ")
		for _, w := range want {
			if !strings.Contains(notes, w) {
				t.Errorf("-ldflags=%s: notes %q, want %q", flags, notes, w)
			}
		}
		if len(c.Notes) != len(want) {
			t.Errorf("-ldflags=%s: notes %q, want only %q", flags, notes, want)
		}
		if c.Flat["0x0000000000401000"] != 10 {
			t.Errorf("-ldflags=%s: counted %v, want the address's 10", flags, c.Flat)
		}
	}
	if _, err := Count(result.ProfileRun{Kind: "instructions", Err: errors.New("valgrind crashed")}); err == nil || !strings.Contains(err.Error(), "valgrind crashed") {
		t.Errorf("a failed fork: %v", err)
	}
}

// TestSharePercent: whole percents, and a share under 1 % with its
// sign and one decimal (-0.5 %, where whole percents print -0 %).
func TestSharePercent(t *testing.T) {
	for share, want := range map[float64]string{0.67: "67 %", -0.27: "-27 %", -0.005: "-0.5 %", 0.0004: "0.0 %", 1.71: "171 %"} {
		if got := sharePercent(share); got != want {
			t.Errorf("sharePercent(%g) = %q, want %q", share, got, want)
		}
	}
}
