package benchctl

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/fleet"
	"github.com/ledgerbench/ledgerbench/internal/fleetcmd"
	"github.com/ledgerbench/ledgerbench/internal/server"
	"github.com/ledgerbench/ledgerbench/internal/session"
	"github.com/ledgerbench/ledgerbench/internal/store"
	"github.com/ledgerbench/ledgerbench/internal/upload"
)

// TestNightlyOnAFleet: nightly --fleet registers the CLI's suite as the
// nightly of a class, every 2 s; the class's agent runs the night just
// past and the next ones and uploads each to a results server, which
// keeps the machine's series: one run a night, each named by the commit
// of the tree that registered it (the agent has no checkout).
func TestNightlyOnAFleet(t *testing.T) {
	url, pool := fleetDatabase(t)
	ctx := t.Context()
	dir := t.TempDir()
	st, srv, tok := resultsServer(t, dir)

	eo := engine.DefaultOptions()
	env := &session.Env{Name: "night-agent", Stderr: os.Stderr}
	s, err := session.Prepare(ctx, env, session.HostOptions{IgnoreLock: true}, &eo)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	m := &fleet.Machine{Pool: pool, Session: s, Dir: t.TempDir(), Name: "night-agent"}
	ag := &fleet.Agent{Pool: pool, Class: "nights", Name: "night-agent", Measure: m.Measure, NightlyPoll: 200 * time.Millisecond,
		Deliver: fleetcmd.Uploader(env, srv, &upload.Spool{Dir: t.TempDir(), Token: tok})}
	if err := ag.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer ag.Drain(10 * time.Second)

	var stdout, stderr strings.Builder
	a := &app{name: "bench", registry: harness.Default, stdout: &stdout, stderr: &stderr, dir: dir, fleet: ab.Fleets}
	code := a.main(ctx, []string{"nightly", "--fleet", url, "--class", "nights", "--every", "2s", "--at", "0s",
		"--suite", "clitest", "--bench", "^BenchmarkEnum/", "--forks", "1", "--warmup", "0", "--measure", "1x10ms"})
	if code != 0 || !strings.Contains(stdout.String(), "nightly registered: 2 cases × 1 rounds every 2s") {
		t.Fatalf("nightly --fleet: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	head := report.CollectHeader("", "").Commit
	machine := s.Check.MachineID
	var runs map[string]string // upload → its commit
	for deadline := time.Now().Add(2 * time.Minute); len(runs) < 2; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 2 minutes for two nights on the server; got %v", runs)
		}
		runs = map[string]string{}
		q, _ := store.ParseQuery("machine-id:" + machine)
		err := st.Search(ctx, q, func(r *benchfmt.Result) error {
			runs[r.GetConfig("upload")] = r.GetConfig("commit")
			if c := r.GetConfig("fleet-comparison"); !strings.HasPrefix(c, "nightly-nights-") || r.GetConfig("fleet-job") == "" || r.GetConfig("fleet-attempt") != "1" {
				t.Errorf("a night's result labelled fleet-comparison %q, fleet-job %q, fleet-attempt %q", c, r.GetConfig("fleet-job"), r.GetConfig("fleet-attempt"))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for up, commit := range runs {
		if commit != head {
			t.Errorf("upload %s names commit %q, want the registering tree's %q", up, commit, head)
		}
	}
	ms, err := st.Machines(ctx)
	if err != nil || len(ms) != 1 || ms[0].ID != machine || ms[0].Runs < 2 || ms[0].Series != 2 {
		t.Errorf("the server's machines: %+v, %v; want %s with 2 runs or more of its 2 series", ms, err, machine)
	}
}

// resultsServer serves a SQLite store in dir, stopped at the test's end:
// the store, the server's URL and an upload token.
func resultsServer(t *testing.T, dir string) (*store.Store, string, string) {
	t.Helper()
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tok, err := server.NewToken(filepath.Join(dir, "tokens"), "agents")
	if err != nil {
		t.Fatal(err)
	}
	toks, err := server.LoadTokens(filepath.Join(dir, "tokens"))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer((&server.Server{Store: st, Tokens: toks}).Handler())
	t.Cleanup(hs.Close)
	return st, hs.URL, tok
}
