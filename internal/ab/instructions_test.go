package ab_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/explain"
	"github.com/ledgerbench/ledgerbench/internal/histgen"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// TestABExplainsByInstructions: an A/B that counts instructions, of the
// explain fixture's mix ×1.6 (mix inlined into encode), names tiny.mix
// first by its instructions per op (the loop's 96 more calls of mix's 5
// instructions, 480 an op, to within 1 %: callgrind loses the measured
// loop for the few ops during which the scheduler switched stacks), and writes the report with mix's line where it
// is at each revision; an A/A names none and counts no change; a commit
// whose parse allocates 24 bytes an op is named by its allocations, one
// object and 24 bytes an op exactly (the profile is divided by every op
// its window ran, the ramps' included).
// Neither of the first two names a function by allocations.
func TestABExplainsByInstructions(t *testing.T) {
	needGit(t)
	testenv.MustHave(t, "valgrind")
	_, self, _, _ := runtime.Caller(0)
	dir := t.TempDir()
	sources, subjects := histgen.ExplainFixture([]histgen.FixturePlant{{Loop: 2, Factor: 1.6, Function: "tiny.mix"}}, 1)
	alloc := strings.Replace(sources[0], "func parse(x uint64, n int) uint64 {", "func parse(x uint64, n int) uint64 {\n\tkeep = make([]byte, 24)", 1) + "\nvar keep []byte\n"
	sources, subjects = append(sources, alloc), append(subjects, "parse allocates")
	c, err := histgen.Write(dir, histgen.Spec{Commits: len(sources) - 1, Sources: sources, Subjects: subjects,
		Harness: filepath.Dir(filepath.Dir(filepath.Dir(self)))})
	if err != nil {
		t.Fatal(err)
	}
	for i, commit := range c[1:] {
		o := options(t, dir, c[0], commit, 3)
		o.Engine.Bench, o.Engine.Profiles, o.Engine.Measure = "^BenchmarkWorkLoop$", []profile.Kind{profile.Instructions}, result.IterSpec{Count: 3, Time: 100 * time.Millisecond}
		if o.Cases, err = o.Engine.Plan(harness.Default); err != nil {
			t.Fatal(err)
		}
		o.Explain, o.ExplainRounds = ab.ExplainAll, 3
		e, say := env()
		res, err := ab.Run(t.Context(), e, o)
		if res == nil || len(res.Explained) != 1 {
			t.Fatalf("commit %d: %+v, %v\n%s", i+1, res, err, say)
		}
		x := res.Explained[0]
		r := x.Instructions
		if r == nil {
			t.Fatalf("commit %d: not explained by instructions: %v\n%s", i+1, x.InstructionsErr, say)
		}
		named := r.Named()
		switch {
		case i == 0 && (len(named) == 0 || named[0].Name != "tiny.mix" || math.Abs(named[0].Flat-480) > 5):
			t.Errorf("mix ×1.6: named %+v, want tiny.mix first, +480 instructions an op", named)
		case i == 1 && (len(named) != 0 || math.Abs(r.Exp-r.Base) > 1e-3*r.Base):
			t.Errorf("A/A: named %+v, %g and %g instructions an op", named, r.Base, r.Exp)
		}
		if x.Allocs == nil {
			t.Fatalf("commit %d: not explained by allocations: %v", i+1, x.AllocsErr)
		}
		switch an := x.Allocs.Named(); {
		case i < 2 && len(an) != 0:
			t.Errorf("commit %d: named by allocations %+v, want none", i+1, an)
		case i == 2 && (len(an) != 1 || an[0].Name != "tiny.parse" || math.Abs(an[0].Objects-1) > 1e-9 || math.Abs(an[0].Bytes-24) > 24e-9):
			t.Errorf("parse allocates: named by allocations %+v, want tiny.parse, +1 alloc/op +24 B/op", an)
		}
		var md bytes.Buffer
		if err := res.Markdown(&md); err != nil {
			t.Fatal(err)
		}
		if i == 0 && !strings.Contains(md.String(), "by instructions: tiny.mix +4") {
			t.Errorf("the row's line does not name mix by instructions:\n%s", md.String())
		}
		if i == 2 && !strings.Contains(md.String(), "allocations: tiny.parse +1.0") {
			t.Errorf("the row's line does not name parse by allocations:\n%s", md.String())
		}
		text, err := os.ReadFile(filepath.Join(x.Dir, explain.InstructionsTextFile))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && !strings.Contains(string(text), "work.go:36  work.go:36") {
			t.Errorf("the report does not give mix's line at each revision:\n%s", text)
		}
	}
}
