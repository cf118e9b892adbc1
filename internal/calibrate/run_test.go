package calibrate_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/calibrate"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/session"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

var registry = &harness.Registry{}

func init() {
	registry.Register(&harness.Benchmark{Family: "cal", Name: "Loop", Params: []harness.Param{{Name: "n", Values: []string{"200", "400"}, Kind: harness.Int}}, Setup: func(t *harness.Trial) error {
		n := t.Int("n")
		t.Run(func(w *harness.Worker) (func(), error) {
			x := uint64(1)
			return func() {
				for range n {
					x = x*6364136223846793005 + 1
				}
				w.Sink(x)
			}, nil
		})
		return nil
	}})
}

// TestMain makes this test binary the forks' program too.
func TestMain(m *testing.M) {
	if engine.IsChild() {
		os.Exit(engine.ChildMain(registry))
	}
	testenv.NoExitSleep()
	os.Exit(m.Run())
}

// options calibrate Loop at 5 ms iterations, 3 comparisons of 3 rounds.
func options(t *testing.T, n string) calibrate.Options {
	t.Helper()
	o := calibrate.Defaults()
	o.Trials, o.Group = 3, 3
	o.Engine.Params = engine.Overrides{"n": strings.Split(n, ",")}
	o.Engine.Warmup, o.Engine.Measure = result.IterSpec{}, result.IterSpec{Count: 2, Time: 5 * time.Millisecond}
	cases, err := o.Engine.Plan(registry)
	if err != nil {
		t.Fatal(err)
	}
	o.Cases, o.Out = cases, filepath.Join(t.TempDir(), "cal")
	o.Host = session.HostOptions{Lock: filepath.Join(t.TempDir(), "lock")}
	return o
}

// TestRunCalibratesWithoutTheCLI: an A/A of one case gives ab's verdicts
// on 3 comparisons of 3 rounds, the report written and returned alike;
// reported again From its aa.txt, the same comparisons give the same
// counts; a pair of parameter values is a known change whose direction
// all rounds together find.
func TestRunCalibratesWithoutTheCLI(t *testing.T) {
	var say strings.Builder
	env := &session.Env{Name: "bench", Command: "calibrate test", Stderr: &say}
	rep, err := calibrate.Run(t.Context(), env, options(t, "200"))
	if err != nil {
		t.Fatalf("%v\n%s", err, say.String())
	}
	if len(rep.Benchmarks) != 1 || rep.Benchmarks[0].Paired.Hits.N != 3 || rep.Overall.Paired.N != 3 || rep.Trials != 3 || rep.Mode != "interleaved" {
		t.Fatalf("report %+v", rep)
	}
	var md strings.Builder
	rep.Markdown(&md)
	written, err := os.ReadFile(rep.File)
	if err != nil || string(written) != md.String() || !strings.Contains(md.String(), "`calibrate test`") {
		t.Errorf("calibration.md (%v):\n%s", err, written)
	}
	again := calibrate.Defaults()
	again.From, again.Group, again.Out = rep.Raw, 3, t.TempDir()
	rep2, err := calibrate.Run(t.Context(), env, again)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := rep.Benchmarks[0].Paired.Hits, rep2.Benchmarks[0].Paired.Hits; a != b || rep2.Trials != 3 {
		t.Errorf("from aa.txt: %+v, measured: %+v", b, a)
	}

	pair := options(t, "200,400")
	pair.Pair, pair.UntilDecided = "n=200,400", 9
	rep, err = calibrate.Run(t.Context(), env, pair)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Pair) != 1 || rep.Pair[0].Change < 0.3 || len(rep.Pair[0].ByRounds) == 0 {
		t.Errorf("twice the loop: %+v", rep.Pair)
	}
	// ab --until-decided's rule never calls twice the loop the same: it is
	// changed, or at 5 ms iterations beside other work still undecided at
	// the cap; replayed From the recorded
	// rounds, the same comparisons give the same result.
	seq := rep.Sequential
	if seq == nil || seq.Comparisons < 1 || seq.Rows[0].Same != 0 || seq.Rows[0].Changed.Hits+seq.Rows[0].Unknown != seq.Comparisons || seq.Rows[0].MostRounds > 9 {
		t.Fatalf("until decided: %+v", seq)
	}
	again = calibrate.Defaults()
	again.From, again.Pair, again.Group, again.UntilDecided, again.Out = rep.Raw, "n=200,400", 3, 9, t.TempDir()
	rep2, err = calibrate.Run(t.Context(), env, again)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Sequential == nil || !reflect.DeepEqual(*rep2.Sequential, *seq) {
		t.Errorf("replayed from aa.txt: %+v, measured: %+v", rep2.Sequential, seq)
	}
}

// TestPlantedReplaysAsPlanted: a calibration of a planted change,
// reported again From its raw rounds, plans its yardsticks (the fixed
// design's rounds, the oracle's) for the change its raw file records as
// planted, as the live run did, not for the change the rounds happen to
// show: a file whose note says +0.5 % replays as --plant 0.5% does, though
// its rounds show B twice as slow.
func TestPlantedReplaysAsPlanted(t *testing.T) {
	env := &session.Env{Name: "bench", Command: "calibrate test"}
	o := options(t, "200")
	o.Plant, o.UntilDecided = 1, 9
	o.Engine.Measure = result.IterSpec{Count: 3, Time: 20 * time.Millisecond}
	rep, err := calibrate.Run(t.Context(), env, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Planted != 1 || rep.Sequential == nil || len(rep.Pair) != 1 {
		t.Fatalf("planted: %+v", rep)
	}
	raw, err := os.ReadFile(rep.Raw)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(raw), "# benchctl: planted=1:", "# benchctl: planted=0.005:", 1)
	if edited == string(raw) {
		t.Fatalf("%s has no planted note", rep.Raw)
	}
	small := filepath.Join(t.TempDir(), "aa.txt")
	if err := os.WriteFile(small, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	replay := func(from string, plant float64) *calibrate.Report {
		again := calibrate.Defaults()
		again.From, again.Plant, again.Group, again.UntilDecided, again.Out = from, plant, 3, 9, t.TempDir()
		r, err := calibrate.Run(t.Context(), env, again)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	noted, told := replay(small, 0), replay(rep.Raw, 0.005)
	if noted.Planted != 0.005 || !reflect.DeepEqual(*noted.Sequential, *told.Sequential) {
		t.Errorf("replayed with its note of +0.5 %%: %+v; told --plant 0.5%%: %+v", noted.Sequential, told.Sequential)
	}
	if same := replay(rep.Raw, 0); !reflect.DeepEqual(*same.Sequential, *rep.Sequential) {
		t.Errorf("replayed: %+v, measured: %+v", same.Sequential, rep.Sequential)
	}
}

// TestRunRefuses: options a calibration cannot run are usage errors.
func TestRunRefuses(t *testing.T) {
	for name, edit := range map[string]func(*calibrate.Options){
		"no trials":   func(o *calibrate.Options) { o.Trials = 0 },
		"small group": func(o *calibrate.Options) { o.Group = 1 },
		"pair+plant":  func(o *calibrate.Options) { o.Pair, o.Plant = "n=200,400", 0.02 },
		"bad pair":    func(o *calibrate.Options) { o.Pair = "n" },
		"absent pair": func(o *calibrate.Options) { o.Pair = "n=1,2" },
		"alpha":       func(o *calibrate.Options) { o.Alpha = 0 },
		"no such raw": func(o *calibrate.Options) { o.From = filepath.Join(t.TempDir(), "aa.txt") },
	} {
		o := options(t, "200,400")
		edit(&o)
		_, err := calibrate.Run(t.Context(), &session.Env{Name: "bench"}, o)
		var ue session.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: error %v, want a usage error", name, err)
		}
	}
}
