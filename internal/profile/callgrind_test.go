package profile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// callgrindText is a callgrind file in the form valgrind 3.19 writes
// with --dump-instr=yes: compressed names, positions relative to the
// last, a call whose cost line is the callee's inclusive cost, an
// inlined file (fi) and a recursion suffix.
const callgrindText = `# callgrind format
version: 1
creator: callgrind-3.19.0
cmd:  ./tiny.test -test.run=^$ -test.bench=Work
positions: instr line
events: Ir
summary: 1111

ob=(1) /tmp/tiny.test
fl=(7) /tmp/tiny/work.go
fn=(2) tiny.Work
0x1000 4 10
+4 * 20
cfn=(3) tiny.hash
calls=5 0x2000 30
* * 1000
+5 +1 1
fi=(8) /tmp/tiny/mix.go
+3 2 30

fn=(3)
0x2000 30 900
+2 +1 100
fn=(4) sync.(*Once).doSlow'2
0x3000 9 50
`

func TestReadCallgrindKnownAnswers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "callgrind.out")
	if err := os.WriteFile(path, []byte(callgrindText), 0o644); err != nil {
		t.Fatal(err)
	}
	cg, err := ReadCallgrind(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []CallgrindCost{
		{Function: "tiny.Work", File: "/tmp/tiny/work.go", Addr: 0x1000, Line: 4, Self: 10},
		{Function: "tiny.Work", File: "/tmp/tiny/work.go", Addr: 0x1004, Line: 4, Self: 20},
		{Function: "tiny.Work", File: "/tmp/tiny/work.go", Addr: 0x1004, Line: 4, Callee: "tiny.hash", Call: 1000},
		{Function: "tiny.Work", File: "/tmp/tiny/work.go", Addr: 0x1009, Line: 5, Self: 1},
		{Function: "tiny.Work", File: "/tmp/tiny/mix.go", Addr: 0x100c, Line: 2, Self: 30},
		{Function: "tiny.hash", File: "/tmp/tiny/work.go", Addr: 0x2000, Line: 30, Self: 900},
		{Function: "tiny.hash", File: "/tmp/tiny/work.go", Addr: 0x2002, Line: 31, Self: 100},
		{Function: "sync.(*Once).doSlow'2", File: "/tmp/tiny/work.go", Addr: 0x3000, Line: 9, Self: 50},
	}
	if cg.Total != 1111 || len(cg.Costs) != len(want) {
		t.Fatalf("total %d, %d costs %+v; want 1111 and %d", cg.Total, len(cg.Costs), cg.Costs, len(want))
	}
	var self int64
	for i, c := range cg.Costs {
		if c != want[i] {
			t.Errorf("cost %d: %+v, want %+v", i, c, want[i])
		}
		self += c.Self
	}
	if self != cg.Total {
		t.Errorf("self costs add to %d, the total is %d", self, cg.Total)
	}
	for _, bad := range []string{
		strings.Replace(callgrindText, "summary: 1111\n", "", 1),
		strings.Replace(callgrindText, "+2 +1 100", "+2 +x 100", 1),
		strings.Replace(callgrindText, "events: Ir", "events: Dr", 1),
		strings.Replace(callgrindText, "0x2000 30 900", "0x2000 30 9z0", 1),
		"positions: instr line\nevents: Ir\nsummary: 1\nwhat is this\n",
	} {
		os.WriteFile(path, []byte(bad), 0o644)
		if _, err := ReadCallgrind(path); err == nil {
			t.Errorf("no error reading a corrupt file:\n%s", bad)
		}
	}
}

// TestInliningNamesTheInlinedFunction builds a program whose mix is
// inlined into encode and finds, in encode's code, addresses that are
// mix's (innermost) within encode; built with -ldflags=-w the program
// has no DWARF, which ReadInlining says.
func TestInliningNamesTheInlinedFunction(t *testing.T) {
	dir := t.TempDir()
	src := `package main

func mix(x uint64) uint64 { return (x ^ x>>27) * 0x94d049bb133111eb }

//go:noinline
func encode(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = mix(x) + uint64(i)
	}
	return x
}

func main() { println(encode(1, 10)) }
`
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module inl\n\ngo 1.26\n"), 0o644)
	build := func(out string, flags ...string) string {
		cmd := exec.Command("go", append(append([]string{"build", "-o", out}, flags...), ".")...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, b)
		}
		return out
	}
	in, err := ReadInlining(build(filepath.Join(dir, "inl")))
	if err != nil {
		t.Fatal(err)
	}
	var lo, hi uint64
	for _, f := range in.funcs {
		if f.name == "main.encode" {
			lo, hi = f.lo, f.hi
		}
	}
	if lo == 0 {
		t.Fatal("main.encode is not among the compiled functions")
	}
	inlined, own := 0, 0
	for a := lo; a < hi; a++ {
		switch fr := in.Frames(a); {
		case len(fr) == 2 && fr[0] == "main.mix" && fr[1] == "main.encode":
			inlined++
		case len(fr) == 1 && fr[0] == "main.encode":
			own++
		default:
			t.Fatalf("address %#x: frames %v", a, fr)
		}
	}
	if inlined == 0 || own == 0 {
		t.Errorf("encode's %d bytes: %d of mix inlined, %d of its own; want both", hi-lo, inlined, own)
	}
	if fr := in.Frames(hi + 1<<30); fr != nil {
		t.Errorf("an address outside the program has frames %v", fr)
	}
	if _, err := ReadInlining(build(filepath.Join(dir, "inl-w"), "-ldflags=-w")); !errors.Is(err, ErrNoDWARF) {
		t.Errorf("without DWARF: %v, want ErrNoDWARF", err)
	}
}
