package ab_test

import (
	"bytes"
	"io/fs"
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
// explain fixture's mix ×2 (mix's own rounds, 2 to 4, inlined into
// encode's 160 calls), names tiny.mix first by its instructions per op
// (2 more rounds of 8 instructions a call, 2560 an op, to within 1 %:
// callgrind loses the measured loop for the few ops during which the
// scheduler switched stacks), finds mix's the largest flat change of its
// CPU profiles, sampled by perf where it can (their period then perf's),
// and writes the report with
// mix's line where it is at each revision; an A/A names none by
// instructions and counts no change; the fixture's allocation plant
// (parse allocates three objects of 32 bytes an op) is named by its
// allocations, 3 objects and 96 bytes an op exactly (the profile is
// divided by every op its window ran, the ramps' included). Neither of
// the first two names a function by allocations.
func TestABExplainsByInstructions(t *testing.T) {
	needGit(t)
	testenv.MustHave(t, "valgrind")
	_, self, _, _ := runtime.Caller(0)
	dir := t.TempDir()
	mix, alloc := histgen.ExplainPlants[6], histgen.ExplainPlants[9]
	if mix.Function != "tiny.mix" || mix.Factor != 2 || !alloc.Allocates() || alloc.Rounds != 3 {
		t.Fatalf("the fixture's plants are not the test's: %v, %v", mix, alloc)
	}
	sources, subjects := histgen.ExplainFixture([]histgen.FixturePlant{mix}, 1)
	plants, _ := histgen.ExplainFixture([]histgen.FixturePlant{alloc}, 0)
	sources, subjects = append(sources, plants[1]), append(subjects, "parse allocates")
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
		case i == 0 && (len(named) == 0 || named[0].Name != "tiny.mix" || math.Abs(named[0].Flat-2560) > 25.6):
			t.Errorf("mix ×2: named %+v, want tiny.mix first, +2560 instructions an op", named)
		case i == 1 && (len(named) != 0 || math.Abs(r.Exp-r.Base) > 1e-3*r.Base):
			t.Errorf("A/A: named %+v, %g and %g instructions an op", named, r.Base, r.Exp)
		}
		if x.Allocs == nil {
			t.Fatalf("commit %d: not explained by allocations: %v", i+1, x.AllocsErr)
		}
		switch an := x.Allocs.Named(); {
		case i < 2 && len(an) != 0:
			t.Errorf("commit %d: named by allocations %+v, want none", i+1, an)
		case i == 2 && (len(an) != 1 || an[0].Name != "tiny.parse" || math.Abs(an[0].Objects-3) > 1e-9 || math.Abs(an[0].Bytes-96) > 96e-9):
			t.Errorf("parse allocates: named by allocations %+v, want tiny.parse, +3 allocs/op +96 B/op", an)
		}
		if i == 0 {
			// The largest flat change is mix's (whether 3 pairs make it
			// significant depends on the host's noise: the power of the
			// CPU profiles is measured in results/explain).
			var top explain.Function
			for _, f := range x.Report.Functions {
				if f.Flat.Mean > top.Flat.Mean {
					top = f
				}
			}
			if top.Name != "tiny.mix" {
				t.Errorf("mix ×2: the largest flat CPU change is %+v, want tiny.mix's; report %+v", top, x.Report)
			}
			sampled, _ := profile.SampleStatus()
			if period := cpuPeriod(t, filepath.Dir(x.Dir)); sampled != (period == profile.SamplePeriod) {
				t.Errorf("perf can sample: %v, and the CPU profiles' period is %d ns", sampled, period)
			}
		}
		var md bytes.Buffer
		if err := res.Markdown(&md); err != nil {
			t.Fatal(err)
		}
		if i == 0 && !strings.Contains(md.String(), "by instructions: tiny.mix +2") {
			t.Errorf("the row's line does not name mix by instructions:\n%s", md.String())
		}
		if i == 2 && !strings.Contains(md.String(), "allocations: tiny.parse +3.0") {
			t.Errorf("the row's line does not name parse by allocations:\n%s", md.String())
		}
		text, err := os.ReadFile(filepath.Join(x.Dir, explain.InstructionsTextFile))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && !strings.Contains(string(text), "work.go:44  work.go:44") {
			t.Errorf("the report does not give mix's line at each revision:\n%s", text)
		}
	}
}

// cpuPeriod is the sampling period of the first CPU profile under an
// explanation's directory.
func cpuPeriod(t *testing.T, dir string) int64 {
	t.Helper()
	var period int64
	filepath.WalkDir(filepath.Join(dir, "profiles"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && period == 0 && d.Name() == "cpu.pb.gz" {
			p, err := profile.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			period = p.Period
		}
		return nil
	})
	return period
}
