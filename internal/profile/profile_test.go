package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func TestParseKinds(t *testing.T) {
	got, err := ParseKinds("cpu, block,cpu,,instructions")
	if err != nil || len(got) != 3 || got[0] != CPU || got[1] != Block || got[2] != Instructions {
		t.Fatalf("ParseKinds = %v, %v", got, err)
	}
	if _, err := ParseKinds("cpu,wall"); err == nil || !strings.Contains(err.Error(), `unknown profiler "wall"`) {
		t.Fatalf("unknown profiler: %v", err)
	}
}

func TestParseCallgrind(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "callgrind.out")
	os.WriteFile(good, []byte("# callgrind format\nversion: 1\nevents: Ir\nsummary: 10760012\n\nfn=(1) x\n1 2\ntotals: 10760012\n"), 0o644)
	if n, err := ParseCallgrind(good); err != nil || n != 10760012 {
		t.Fatalf("ParseCallgrind = %d, %v", n, err)
	}
	bad := filepath.Join(dir, "bad.out")
	os.WriteFile(bad, []byte("nothing here\n"), 0o644)
	if _, err := ParseCallgrind(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("ParseCallgrind(bad) = %v", err)
	}
}

// mk builds a block-style profile with one sample per frame name.
func mk(frames map[string]int64) *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}}}
	id := uint64(1)
	for name, delay := range frames {
		fn := &profile.Function{ID: id, Name: name}
		loc := &profile.Location{ID: id, Line: []profile.Line{{Function: fn}}}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{delay / 100, delay}})
		id++
	}
	return p
}

func TestDiffAndSummarize(t *testing.T) {
	before := mk(map[string]int64{"pkg.setupContention": 5000, "pkg.opContention": 100})
	after := mk(map[string]int64{"pkg.setupContention": 5000, "pkg.opContention": 900100})
	d, err := Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "block.pb.gz")
	var b bytes.Buffer
	if err := d.Write(&b); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, b.Bytes(), 0o644)
	s, err := Summarize(path, Block, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Top) != 1 || s.Top[0].Frame != "pkg.opContention" || s.Top[0].Value != 900 || s.Top[0].Count != 9 {
		t.Fatalf("summary %+v: want only opContention at 900 ns/op and 9 contentions/op", s.Top)
	}
	var md bytes.Buffer
	other := *s
	other.Top = nil
	other.TotalRaw, other.Total = 0, 0
	err = WriteMarkdown(&md, []CaseProfiles{
		{Name: "BenchmarkX/impl=locked", Group: "BenchmarkX", Side: "impl=locked", Summaries: []*Summary{s}},
		{Name: "BenchmarkX/impl=atomic", Group: "BenchmarkX", Side: "impl=atomic", Summaries: []*Summary{&other}, InstructionsPerOp: 42},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"On `pkg.opContention`: impl=locked 900.0µs (900.0ns/op) → impl=atomic none.",
		"| `pkg.opContention` | 900.0ns/op | none |",
		"42.0 instructions/op",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

func TestCallgrindEnvKeepsTheUsersGODEBUG(t *testing.T) {
	t.Setenv("GODEBUG", "")
	env := CallgrindEnv([]string{"X=1"})
	want := []string{"X=1", "GOMAXPROCS=1", "GOGC=off", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off"}
	if !slices.Equal(env, want) {
		t.Errorf("CallgrindEnv = %q, want %q", env, want)
	}
	t.Setenv("GODEBUG", "madvdontneed=1")
	if got := CallgrindEnv(nil); got[len(got)-1] != "GODEBUG=madvdontneed=1,asyncpreemptoff=1,cpu.rdtscp=off" {
		t.Errorf("the parent's GODEBUG is lost: %q", got)
	}
	if got := CallgrindEnv([]string{"GODEBUG=gctrace=1"}); got[len(got)-1] != "GODEBUG=gctrace=1,asyncpreemptoff=1,cpu.rdtscp=off" {
		t.Errorf("the fork's GODEBUG is lost: %q", got)
	}
}

func TestValgrindFault(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string // a part of the message; "" for none
	}{
		{[]string{"vex amd64->IR: unhandled instruction bytes: 0xF 0x1 0xF9 0x48 0xC1 0xE2 0x20 0x48 0x1 0xD0", "SIGILL: illegal instruction"}, "RDTSCP (bytes 0xF 0x1 0xF9"},
		{[]string{"vex amd64->IR: unhandled instruction bytes: 0x62 0xF1 0x7C 0x48"}, "(bytes 0x62 0xF1 0x7C 0x48): a limit of valgrind"},
		{[]string{"Callgrind: threads.c:247 (vgCallgrind_post_signal): Assertion 'sigNum == vgCallgrind_current_state.sig' failed."}, "an assertion of its own"},
		{[]string{"==12== valgrind: the 'impossible' happened:"}, "a fault of valgrind"},
		{[]string{"panic: runtime error: index out of range", "SIGILL: illegal instruction"}, ""},
		{nil, ""},
	} {
		got := ValgrindFault(tc.lines)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("ValgrindFault(%q) = %q, want it to contain %q", tc.lines, got, tc.want)
		}
	}
}
