package ab

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// batches is a Remote whose every Measure is a batch of 3 rounds, one
// file a machine (two machines) in the batch's directory.
type batches struct{ rng *rand.Rand }

func (b batches) Measure(_ context.Context, _ *session.Env, r Rounds) ([]string, error) {
	os.MkdirAll(r.Dir, 0o755)
	var paths []string
	for m, name := range []string{"box-a", "box-b"} {
		var s strings.Builder
		fmt.Fprintf(&s, "# benchctl: made by `test` at 2026-12-05T00:00:00Z; raw output, not edited\nmachine: %s\n", name)
		for _, side := range []string{"baseline", "experiment"} {
			fmt.Fprintf(&s, "toolchain: %s\n", side)
			for f := 1; f <= 3; f++ {
				v := 100 * (1 + 0.01*float64(m)) * (1 + 0.01*b.rng.NormFloat64())
				fmt.Fprintf(&s, "BenchmarkX-2 1000 %.3f ns/op\n# benchctl: fork=%d iter=0 mode=avgt\n", v, f)
			}
		}
		p := filepath.Join(r.Dir, name+".txt")
		if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// TestRemotelyJoinsAMachinesBatches: the batches of a comparison measured
// remotely are decided with each machine as one stratum, whatever the
// batches: after three batches of 3 rounds on two machines, a row of 18
// pairs in 2 strata, not 6 of 3 pairs. (Decided sequentially, as a
// bisection's steps are, the pairs are pooled: the anytime-valid test
// has no strata.)
func TestRemotelyJoinsAMachinesBatches(t *testing.T) {
	dir := t.TempDir()
	env := &session.Env{Name: "test", Stderr: new(strings.Builder)}
	remote := batches{rand.New(rand.NewPCG(1, 2))}
	var paths []string
	for b := 1; b <= 3; b++ {
		ts, all, rec, err := Remotely(t.Context(), env, remote, Rounds{Dir: filepath.Join(dir, fmt.Sprintf("batch-%d", b))}, paths, filepath.Join(dir, "ab.txt"), Verdicts(0.05, 1, false))
		if err != nil {
			t.Fatal(err)
		}
		paths = all
		tab := ts.Tables[0]
		d := tab.Decision(tab.Rows[0], tab.Cols[1])
		if len(ts.Tables) != 1 || d == nil || d.Change.N != 6*b || d.Hosts == nil || d.Hosts.Hosts != 2 {
			t.Fatalf("batch %d: %d tables, decision %+v; want one row of %d pairs in 2 strata", b, len(ts.Tables), d, 6*b)
		}
		if want := 2 * b; len(paths) != want || strings.Count(string(rec.Data), "# benchctl: made by ") != want {
			t.Errorf("batch %d: %d paths, %d runs in %s; want %d", b, len(paths), strings.Count(string(rec.Data), "# benchctl: made by "), rec.Path, want)
		}
	}
}

// TestCheckRemote: a fleet adds rounds until decided (with or without a
// budget), and refuses what it cannot run.
func TestCheckRemote(t *testing.T) {
	remote := batches{}
	for i, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Remote: remote, Engine: engine.Options{UntilDecided: true, Budget: time.Minute}}, ""},
		{Options{Remote: remote, Engine: engine.Options{Detect: 0.02, Budget: time.Minute}}, "Detect and Precision run on one machine"},
		{Options{Remote: remote, Engine: engine.Options{Precision: 0.01}}, "Detect and Precision run on one machine"},
		{Options{Remote: remote, Engine: engine.Options{Profiles: []profile.Kind{profile.CPU}}}, "Profiles runs on one machine"},
		{Options{Remote: remote, Packages: []string{"./x"}}, ""}, // each package's binary goes with its directory
		{Options{Engine: engine.Options{Detect: 0.02}}, ""},
	} {
		err := tc.o.checkRemote()
		if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || !strings.Contains(got, tc.want) {
			t.Errorf("case %d: checkRemote = %v, want %q", i, err, tc.want)
		}
	}
}

// TestNextBatch: a fleet's next batch is expected to take the plan's
// time, or the last batch's wall time in proportion to its cases when
// that is longer (a loaded machine, the agents' polling).
func TestNextBatch(t *testing.T) {
	o := engine.Options{Forks: 3, Warmup: result.IterSpec{Count: 1, Time: 30 * time.Millisecond}, Measure: result.IterSpec{Count: 3, Time: 30 * time.Millisecond}}
	plan := engine.FirstRounds(o, 2) // 3 rounds × 2 cases × 2 sides × 220 ms
	for _, c := range []struct {
		took            time.Duration
		measured, cases int
		want            time.Duration
	}{
		{0, 4, 2, plan},
		{time.Second, 4, 2, plan},
		{40 * time.Second, 4, 2, 20 * time.Second},
		{15 * time.Second, 1, 2, 30 * time.Second},
		{15 * time.Second, 0, 2, 30 * time.Second},
	} {
		if got := nextBatch(o, c.took, c.measured, c.cases); got != c.want {
			t.Errorf("nextBatch(took %s, %d measured, %d cases) = %s, want %s", c.took, c.measured, c.cases, got, c.want)
		}
	}
	if plan != 2640*time.Millisecond {
		t.Errorf("the plan of 3 rounds of 2 cases is %s, want 2.64s", plan)
	}
}
