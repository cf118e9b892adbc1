package ab_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/session"
	"github.com/ledgerbench/ledgerbench/internal/tinyrepo"
)

func init() {
	// The parent plans with its own registry; the tiny module's binaries
	// (and the explain fixture's, for WorkLoop) run the bodies.
	for _, name := range []string{"TinyWork", "WorkLoop"} {
		harness.Register(&harness.Benchmark{Family: "tiny", Name: name, Setup: func(t *harness.Trial) error {
			t.Run(func(w *harness.Worker) (func(), error) { return func() {}, nil })
			return nil
		}})
	}
}

// options are an A/B of the tiny repository's TinyWork at 30 ms
// iterations, on a lock of the test's own.
func options(t *testing.T, dir, base, head string, rounds int) ab.Options {
	t.Helper()
	eo := engine.ABOptions()
	eo.Bench, eo.Forks = "^BenchmarkTinyWork$", rounds
	eo.Warmup = result.IterSpec{Count: 1, Time: 30 * time.Millisecond}
	eo.Measure = result.IterSpec{Count: 3, Time: 30 * time.Millisecond}
	cases, err := eo.Plan(harness.Default)
	if err != nil {
		t.Fatal(err)
	}
	return ab.Options{Base: base, Head: head, Program: "./cmd/bench", Cases: cases, Engine: eo, Alpha: 0.05, MinChange: 1, Explain: ab.ExplainOff,
		Dir: dir, Out: filepath.Join(t.TempDir(), "ab"), Host: session.HostOptions{Lock: filepath.Join(t.TempDir(), "lock")}}
}

func env() (*session.Env, *strings.Builder) {
	var say strings.Builder
	return &session.Env{Name: "bench", Command: "ab test", Stderr: &say}, &say
}

func needGit(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds two revisions")
	}
}

// TestRunFindsTheRegression runs ab without the CLI: the 4× slower head
// is a regression of TinyWork, with its verdict, in ab.txt's table; both
// commits are in the file's header, and the error is the regression's.
// Eight rounds: the signed-rank test and its interval, which one round
// disturbed by the other packages' tests (go test runs them beside this
// one) cannot move much; with four, Student's interval of a disturbed
// round reached below 1.5 (1 of 16 runs under two busy loops).
func TestRunFindsTheRegression(t *testing.T) {
	needGit(t)
	dir, c := tinyrepo.Make(t)
	o := options(t, dir, c[1], c[2], 8)
	e, say := env()
	res, err := ab.Run(t.Context(), e, o)
	var fe session.FailedError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "1 significant regression") {
		t.Fatalf("error %v, want the regression\n%s", err, say)
	}
	if res == nil || len(res.Regressions) != 1 || !strings.Contains(res.Regressions[0].Benchmark, "TinyWork") || res.Regressions[0].Unit != "sec/op" {
		t.Fatalf("regressions %+v", res)
	}
	if ch := res.Regressions[0].Decision.Change; ch.Lo < 1.5 {
		t.Errorf("a 4× slower loop measured %+.1f %% [%+.1f, %+.1f]", ch.Pct(), (ch.Lo-1)*100, (ch.Hi-1)*100)
	}
	if !strings.Contains(say.String(), "→ "+res.Out+"\n") {
		t.Errorf("where the results go is not said at the start:\n%s", say)
	}
	if res.Revs[0].Commit != c[1] || res.Revs[1].Commit != c[2] || res.Failed != 0 || res.Confirmed {
		t.Errorf("revs %v, failed %d, confirmed %v", res.Revs, res.Failed, res.Confirmed)
	}
	txt, err := os.ReadFile(res.File)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"toolchain: baseline", "toolchain: experiment", "baseline-commit: " + c[1], "experiment-commit: " + c[2], "A/B fork order"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("ab.txt lacks %q", want)
		}
	}
}

// TestRunConfirms: with Confirm, a regression found by the first run is
// measured again (ab-confirm.txt) and kept only when found twice; an A/A
// of the same commit finds none and returns no error. Eight rounds as
// above: with three, CI's loaded run once found no regression at all.
func TestRunConfirms(t *testing.T) {
	needGit(t)
	dir, c := tinyrepo.Make(t)
	o := options(t, dir, c[1], c[2], 8)
	o.Confirm = true
	e, say := env()
	res, err := ab.Run(t.Context(), e, o)
	if err == nil || res == nil || !res.Confirmed || len(res.Regressions) != 1 {
		t.Fatalf("error %v, result %+v\n%s", err, res, say)
	}
	if _, err := os.Stat(filepath.Join(o.Out, "ab-confirm.txt")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(say.String(), "confirming with a second A/B run") {
		t.Errorf("no word of the confirmation:\n%s", say)
	}
	aa := options(t, dir, c[2], c[2], 2)
	aa.MinChange = 20
	res, err = ab.Run(t.Context(), e, aa)
	if err != nil || len(res.Regressions) != 0 || res.Tables == nil {
		t.Fatalf("A/A: error %v, result %+v", err, res)
	}
}

// TestRunRefuses: bad options are usage errors before anything is built.
func TestRunRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, edit := range map[string]func(*ab.Options){
		"no base":      func(o *ab.Options) { o.Base = "" },
		"alpha":        func(o *ab.Options) { o.Alpha = 1 },
		"margin":       func(o *ab.Options) { o.MinChange = 100 },
		"no forks":     func(o *ab.Options) { o.Engine.Forks = 0 },
		"cpu profile":  func(o *ab.Options) { o.Engine.Profiles = []profile.Kind{profile.CPU} },
		"program+pkgs": func(o *ab.Options) { o.Packages = []string{"./..."} },
	} {
		o := ab.Options{Base: "HEAD", Head: ".", Program: "./cmd/bench", Engine: engine.ABOptions(), Alpha: 0.05, MinChange: 1, Dir: dir, Out: t.TempDir()}
		edit(&o)
		e, _ := env()
		_, err := ab.Run(t.Context(), e, o)
		var ue session.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: error %v, want a usage error", name, err)
		}
	}
}
