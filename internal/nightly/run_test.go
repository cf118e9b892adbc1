package nightly_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/nightly"
	"github.com/ledgerbench/ledgerbench/internal/session"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
	"github.com/ledgerbench/ledgerbench/internal/tinyrepo"
)

var registry = &harness.Registry{}

func init() {
	registry.Register(&harness.Benchmark{Family: "night", Name: "Step", Setup: func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) {
			x := uint64(1)
			return func() { x = x*6364136223846793005 + 1; w.Sink(x) }, nil
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

// TestRunRecordsNights runs nightly without the CLI, twice: each night is
// recorded append-only under the machine, the README lists the series,
// and a host that is not pinned is refused unless allowed.
func TestRunRecordsNights(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a git repository")
	}
	dir, _ := tinyrepo.Make(t)
	o := nightly.Options{Results: t.TempDir(), Anchor: "none", Registry: registry, Dir: dir, AllowUnpinned: true,
		Host: session.HostOptions{Lock: filepath.Join(t.TempDir(), "lock")}}
	o.Engine = engine.DefaultOptions()
	o.Engine.Forks, o.Engine.Warmup, o.Engine.Measure = 2, result.IterSpec{}, result.IterSpec{Count: 2, Time: 5 * time.Millisecond}
	var err error
	if o.Cases, err = o.Engine.Plan(registry); err != nil {
		t.Fatal(err)
	}
	var say strings.Builder
	var written []string
	env := &session.Env{Name: "bench", Stderr: &say, Wrote: func(p string) { written = append(written, p) }}
	night := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	var paths []string
	for i := range 2 {
		o.Now = func() time.Time { return night.AddDate(0, 0, i) }
		res, err := nightly.Run(t.Context(), env, o)
		if err != nil {
			t.Fatalf("night %d: %v\n%s", i, err, say.String())
		}
		if _, err := os.Stat(res.Path); err != nil || !strings.Contains(res.Path, filepath.Join("nightly", res.Machine)) || len(res.Regressions) != 0 {
			t.Fatalf("night %d: %+v (%v)", i, res, err)
		}
		paths = append(paths, res.Path)
	}
	if paths[0] == paths[1] || len(written) != 2 || written[1] != paths[1] {
		t.Errorf("recorded %v, told as written %v", paths, written)
	}
	readme, err := os.ReadFile(filepath.Join(o.Results, "README.md"))
	if err != nil || !strings.Contains(string(readme), "2 runs") || !strings.Contains(string(readme), "BenchmarkStep") {
		t.Errorf("README (%v):\n%s", err, readme)
	}

	o.AllowUnpinned, o.Host.Strict = false, false
	if _, err := nightly.Run(t.Context(), env, o); err != nil {
		var fe session.FailedError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "AllowUnpinned to record anyway") {
			t.Errorf("an unpinned host: %v", err)
		}
	}
}
