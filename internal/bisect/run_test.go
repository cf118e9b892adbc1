package bisect_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/bisect"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/histgen"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/session"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// noRemote is a fleet that measures nothing: bisect refuses before it
// would be asked.
type noRemote struct{}

func (noRemote) Measure(context.Context, *session.Env, ab.Rounds) ([]string, error) {
	return nil, errors.New("not a fleet")
}

func init() {
	// The parent plans with its own registry; the generated history's
	// binaries run the bodies.
	harness.Register(&harness.Benchmark{Family: "tiny", Name: "WorkLoop", Setup: func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) { return func() {}, nil })
		return nil
	}})
}

// options bisect a generated history of n commits whose commit culprit
// makes WorkLoop factor times slower, at 20 ms iterations.
func options(t *testing.T, n, culprit int, factor float64) (bisect.Options, []string) {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	dir := t.TempDir()
	commits, err := histgen.Write(dir, histgen.Spec{Commits: n, Changes: []histgen.Change{{At: culprit, Factor: factor}},
		Rounds: 64, Harness: filepath.Dir(filepath.Dir(filepath.Dir(self)))})
	if err != nil {
		t.Fatal(err)
	}
	o := bisect.Defaults()
	o.Explain = ab.ExplainOff // benchctl's bisect test explains a culprit
	o.Engine.Bench, o.Engine.Forks = "^BenchmarkWorkLoop$", 3
	o.Engine.Warmup = result.IterSpec{Count: 1, Time: 20 * time.Millisecond}
	o.Engine.Measure = result.IterSpec{Count: 3, Time: 20 * time.Millisecond}
	if o.Cases, err = o.Engine.Plan(harness.Default); err != nil {
		t.Fatal(err)
	}
	o.Good, o.Bad, o.Program, o.Dir = commits[0], commits[n], "./cmd/bench", dir
	o.MinChange, o.Budget, o.BuildCache = 10, 20*time.Second, filepath.Join(t.TempDir(), "cache")
	o.Out = filepath.Join(t.TempDir(), "bisect")
	o.Host = session.HostOptions{Lock: filepath.Join(t.TempDir(), "lock")}
	return o, commits
}

// TestRunFindsTheCulprit bisects without the CLI: the commit that made
// the loop 4× slower is the culprit, confirmed by its own A/B against its
// parent, and the report the Run returns is the one written to Out. With
// {Profiles} instructions, the culprit's own A/B, and no other step's,
// counts instructions, and the culprit is explained by them too.
func TestRunFindsTheCulprit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds revisions")
	}
	testenv.MustHave(t, "valgrind")
	o, c := options(t, 4, 3, 4)
	o.Explain, o.ExplainRounds, o.Engine.Profiles = ab.ExplainChanged, 3, []profile.Kind{profile.Instructions}
	var say strings.Builder
	rep, err := bisect.Run(t.Context(), &session.Env{Name: "bench", Command: "bisect test", Stderr: &say}, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, say.String())
	}
	if rep.Culprit == nil || rep.Culprit.Hash != c[3] || rep.Own == nil || rep.Own.Parent.Hash != c[2] || rep.Own.Verdict != "changed" {
		t.Fatalf("culprit %+v, own %+v; want %s\n%s", rep.Culprit, rep.Own, c[3], say.String())
	}
	if first, _, _ := strings.Cut(say.String(), "\n"); !strings.Contains(first, "→ "+o.Out+" (build cache: "+o.BuildCache+")") {
		t.Errorf("the first line does not say where results and builds go: %q", first)
	}
	if !strings.Contains(rep.Own.Functions, "by instructions: tiny.Work +") {
		t.Errorf("the culprit's functions %q (%s): want Work by instructions", rep.Own.Functions, rep.Own.Unexplained)
	}
	steps, _ := filepath.Glob(filepath.Join(o.Out, "steps", "*", "ab.txt"))
	for _, f := range steps {
		b, _ := os.ReadFile(f)
		if counted := strings.Contains(string(b), "instructions/op"); counted != strings.Contains(f, "culprit") {
			t.Errorf("%s counts instructions: %v", f, counted)
		}
	}
	if len(steps) < 2 {
		t.Errorf("steps %v", steps)
	}
	if rep.Command != "bisect test" || bisect.RowName(rep.Benchmark) != "WorkLoop" || rep.Total == nil || rep.Total.Ratio < 2 {
		t.Errorf("report %+v", rep)
	}
	var md strings.Builder
	rep.Markdown(&md)
	written, err := os.ReadFile(filepath.Join(o.Out, "bisect.md"))
	if err != nil || string(written) != md.String() || !strings.Contains(md.String(), "## Culprit: "+c[3][:12]) {
		t.Errorf("bisect.md (%v):\n%s\nthe report:\n%s", err, written, md.String())
	}
}

// TestRunRefuses: options a bisection cannot run are usage errors,
// before anything is resolved or built.
func TestRunRefuses(t *testing.T) {
	for name, edit := range map[string]func(*bisect.Options){
		"no good":        func(o *bisect.Options) { o.Good = "" },
		"working tree":   func(o *bisect.Options) { o.Bad = "." },
		"direction":      func(o *bisect.Options) { o.Direction = "sideways" },
		"program+pkgs":   func(o *bisect.Options) { o.Packages = []string{"./..."} },
		"too few rounds": func(o *bisect.Options) { o.Engine.Forks = 2 },
		"margin":         func(o *bisect.Options) { o.MinChange = -1 },
		"cpu profiles":   func(o *bisect.Options) { o.Engine.Profiles = []profile.Kind{profile.CPU} },
		"instructions on a fleet": func(o *bisect.Options) {
			o.Engine.Profiles, o.Remote = []profile.Kind{profile.Instructions}, noRemote{}
		},
	} {
		o := bisect.Defaults()
		o.Explain = ab.ExplainOff // benchctl's bisect test explains a culprit
		o.Good, o.Bad, o.Program, o.Dir, o.Out = "HEAD~1", "HEAD", "./cmd/bench", t.TempDir(), t.TempDir()
		o.Engine.Forks = engine.PrecisionForks
		edit(&o)
		_, err := bisect.Run(t.Context(), &session.Env{Name: "bench"}, o)
		var ue session.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: error %v, want a usage error", name, err)
		}
	}
}
