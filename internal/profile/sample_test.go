package profile

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// TestReadSamplesNamesFunctionsAsPprof runs a program whose loop spends
// three times as long in b as in a, and whose encode inlines mix, under
// perf record, and reads the samples back: a and b in the ratio of their
// work (to 15 %), mix named inside encode as pprof names an inlined
// function (its own line, then encode's), each sample one period of CPU
// time, a caller named by its call, not by the inlined code that follows
// it (main.tail), and none kept when asked for those inside a function no
// stack passes through. Without DWARF (-ldflags=-w) mix is counted in encode,
// named by the symbol table.
func TestReadSamplesNamesFunctionsAsPprof(t *testing.T) {
	if ok, why := SampleStatus(); !ok {
		testenv.Missing(t, "perf cannot sample here: "+why)
	}
	dir := t.TempDir()
	src := `package main

//go:noinline
func a(x uint64) uint64 { for i := 0; i < 100; i++ { x ^= x >> 7; x *= 31 }; return x }

//go:noinline
func b(x uint64) uint64 { for i := 0; i < 300; i++ { x ^= x >> 7; x *= 31 }; return x }

func mix(x uint64) uint64 { return (x ^ x>>27) * 0x94d049bb133111eb }

//go:noinline
func encode(x uint64) uint64 { for i := 0; i < 100; i++ { x = mix(x) + uint64(i) }; return x }

//go:noinline
func work(x uint64) uint64 { return encode(b(a(x))) }

// tail is inlined into main, where its code follows the call to work.
func tail(x uint64) uint64 { return x*3 + 1 }

func main() {
	var x uint64 = 1
	for i := 0; i < 600000; i++ { x = tail(work(x)) }
	println(x)
}
`
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module smp\n\ngo 1.26\n"), 0o644)
	for _, dwarf := range []bool{true, false} {
		exe := filepath.Join(dir, "smp"+strconv.FormatBool(dwarf))
		args := []string{"build", "-o", exe}
		if !dwarf {
			args = append(args, "-ldflags=-w")
		}
		cmd := exec.Command("go", append(args, ".")...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, b)
		}
		data := exe + ".data"
		if b, err := exec.Command("perf", append(recordArgs(data), "--", exe)...).CombinedOutput(); err != nil {
			t.Fatalf("perf record: %v\n%s", err, b)
		}
		p, err := ReadSamples(data, exe, "runtime.main")
		if err != nil {
			t.Fatal(err)
		}
		flat := map[string]int64{}
		var all int64
		for _, s := range p.Sample {
			if s.Value[1] != SamplePeriod*s.Value[0] {
				t.Fatalf("a sample of %d ns and %d count", s.Value[1], s.Value[0])
			}
			all += s.Value[0]
			ls := s.Location[0].Line
			flat[ls[0].Function.Name] += s.Value[0]
			if ls[0].Function.Name == "main.mix" && (len(ls) != 2 || ls[1].Function.Name != "main.encode") {
				t.Errorf("mix's sample names %v, want mix inlined in encode", ls)
			}
			for _, loc := range s.Location[1:] {
				if loc.Line[0].Function.Name == "main.tail" {
					t.Fatalf("a caller's frame is named main.tail, whose inlined code follows the call: %v", loc.Line)
				}
			}
		}
		ratio := float64(flat["main.b"]) / float64(flat["main.a"])
		t.Logf("DWARF %v: %d samples, flat %v, b/a %.2f", dwarf, all, flat, ratio)
		if all < 1000 || math.Abs(ratio-3) > 0.45 {
			t.Errorf("DWARF %v: %d samples, b/a %.2f: want over 1000 and 3 ± 15 %%", dwarf, all, ratio)
		}
		if dwarf != (flat["main.mix"] > 0) || flat["main.encode"] == 0 {
			t.Errorf("DWARF %v: mix %d samples, encode %d: mix is named where DWARF names it, encode always", dwarf, flat["main.mix"], flat["main.encode"])
		}
		if _, err := ReadSamples(data, exe, "main.nowhere"); err == nil || !strings.Contains(err.Error(), "no sample inside main.nowhere") {
			t.Errorf("samples inside a function no stack has: %v", err)
		}
	}
	if _, err := ReadSamples(filepath.Join(dir, "missing.data"), filepath.Join(dir, "smptrue")); err == nil || !strings.Contains(err.Error(), "perf script") {
		t.Errorf("a missing data file: %v", err)
	}
}
