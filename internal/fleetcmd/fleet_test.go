package fleetcmd

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/fleet"
	"github.com/ledgerbench/ledgerbench/internal/session"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// fleetRun runs the fleet command with args; its output and error.
func fleetRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	c := fleetCmd("bench")
	var out strings.Builder
	c.SetOut(&out)
	c.SetErr(&out)
	c.SetArgs(args)
	err := c.ExecuteContext(t.Context())
	return out.String(), err
}

// TestFleetNightliesListsAndRemoves: fleet migrate, then fleet
// nightlies lists a registered nightly with its next night and removes
// it; a class without one, or no --db, is bad input.
func TestFleetNightliesListsAndRemoves(t *testing.T) {
	db := testenv.PostgresDB(t)
	if out, err := fleetRun(t, "migrate", "--db", db); err != nil || !strings.Contains(out, "the fleet's tables are up to date") {
		t.Fatalf("fleet migrate: %v\n%s", err, out)
	}
	pool, err := fleet.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	n := fleet.Nightly{Class: "epyc", Every: 24 * time.Hour, At: 3 * time.Hour,
		Job: fleet.Rounds{Sides: []fleet.Artifact{{Side: "night", SHA256: "0123456789abcdef0123"}}, Cases: []string{"BenchmarkA", "BenchmarkB"}, Count: 5}}
	if err := fleet.RegisterNightly(t.Context(), pool, n); err != nil {
		t.Fatal(err)
	}
	next := n.Next(time.Now()).UTC().Format(time.RFC3339)
	out, err := fleetRun(t, "nightlies", "--db", db)
	if want := "epyc\tevery 24h0m0s at 3h0m0s\tnext " + next + "\t2 cases × 5 rounds\tprogram 0123456789ab\n"; err != nil || out != want {
		t.Errorf("fleet nightlies: %v\n%q\nwant %q", err, out, want)
	}
	if out, err := fleetRun(t, "nightlies", "--db", db, "--remove", "epyc"); err != nil || !strings.Contains(out, "removed the nightly of class epyc") {
		t.Errorf("--remove epyc: %v\n%s", err, out)
	}
	var usage session.UsageError
	if _, err := fleetRun(t, "nightlies", "--db", db, "--remove", "epyc"); !errors.As(err, &usage) || !strings.Contains(err.Error(), "class epyc has no nightly") {
		t.Errorf("--remove of a class without a nightly: %v", err)
	}
	if out, err := fleetRun(t, "nightlies", "--db", db); err != nil || !strings.Contains(out, "no nightly is registered") {
		t.Errorf("fleet nightlies after the removal: %v\n%s", err, out)
	}
	if _, err := fleetRun(t, "nightlies"); !errors.As(err, &usage) {
		t.Errorf("no --db: %v", err)
	}
}

// TestLabelledLabelsEveryResult: the job's labels go before the first
// result, after the header, so every result has them and the header's
// first lines stay first; a file of no result gets them at its end.
func TestLabelledLabelsEveryResult(t *testing.T) {
	const labels = "fleet-job: 7\n"
	file := "# benchctl: made by `bench run` at 2026-12-05T13:00:00Z;\nmachine-id: m1\n\nBenchmarkA 1 2 ns/op\nkind: x\nBenchmarkB 1 3 ns/op\n"
	want := "# benchctl: made by `bench run` at 2026-12-05T13:00:00Z;\nmachine-id: m1\n\nfleet-job: 7\nBenchmarkA 1 2 ns/op\nkind: x\nBenchmarkB 1 3 ns/op\n"
	if got := string(labelled([]byte(file), labels)); got != want {
		t.Errorf("labelled:\n%s\nwant\n%s", got, want)
	}
	if got := string(labelled([]byte("machine-id: m1"), labels)); got != "machine-id: m1\n"+labels {
		t.Errorf("a file of no result: %q", got)
	}
}
