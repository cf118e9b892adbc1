package fleet

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// TestMain runs a fork of abRegistry's benchmarks when it is one (the
// program TestTwoAgentsMeasureAnAB publishes); when FLEET_TEST_AGENT
// names a database, the doomed agent of TestAKilledAgentsJobIsRescued: it claims a job, says so in the
// file FLEET_TEST_MARK and hangs until it is killed.
func TestMain(m *testing.M) {
	if engine.IsChild() {
		os.Exit(engine.ChildMain(abRegistry))
	}
	if url := os.Getenv("FLEET_TEST_AGENT"); url != "" {
		os.Exit(doomedAgent(url, os.Getenv("FLEET_TEST_MARK")))
	}
	testenv.NoExitSleep()
	os.Exit(m.Run())
}

func doomedAgent(url, mark string) int {
	ctx := context.Background()
	pool, err := Open(ctx, url)
	if err != nil {
		return 3
	}
	a := &Agent{Pool: pool, Class: "a", Name: "doomed", Run: func(ctx context.Context, j Rounds, attempt int) ([]byte, error) {
		os.WriteFile(mark, []byte(j.Cases[0]), 0o644)
		select {} // measuring, until SIGKILL
	}}
	if err := a.Start(ctx); err != nil {
		return 3
	}
	select {}
}

// TestAKilledAgentsJobIsRescued: an agent in a process of its own claims
// the job and is killed (SIGKILL) mid-job; River rescues the job and
// another agent runs it: its one result is the second attempt's, by the
// rescuer, and nothing of the killed attempt is counted.
func TestAKilledAgentsJobIsRescued(t *testing.T) {
	pool := fleetDB(t)
	url := pool.Config().ConnString()
	mark := filepath.Join(t.TempDir(), "claimed")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FLEET_TEST_AGENT="+url, "FLEET_TEST_MARK="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	c, err := NewCoordinator(pool)
	if err != nil {
		t.Fatal(err)
	}
	js := jobs("cmp3", "a", 1)
	js[0].Timeout = time.Second
	e, err := c.Enqueue(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		// WriteFile creates the file before it writes: wait for its
		// content, or the kill may land between the two.
		if b, err := os.ReadFile(mark); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the doomed agent never claimed the job")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	rescuer := &Agent{Pool: pool, Class: "a", Name: "rescuer", RescueAfter: 2 * time.Second,
		Run: func(ctx context.Context, j Rounds, attempt int) ([]byte, error) {
			return []byte("rescued " + j.Cases[0]), nil
		}}
	if err := rescuer.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer rescuer.Drain(10 * time.Second)
	// River's rescuer runs on the leader every 30 s, first at its start;
	// leadership passes to the rescuer once the killed leader's expires.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var last Progress
	if err := c.Wait(ctx, e, 200*time.Millisecond, func(p Progress) error { last = p; return nil }); err != nil {
		t.Fatalf("the job was not rescued: %v (%v)", err, last)
	}
	rs, err := c.Results(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	if r := rs[0]; r.Agent != "rescuer" || r.Attempt != 2 || string(r.File) != "rescued BenchmarkCase0" {
		t.Errorf("result %+v, want the rescuer's, attempt 2", r)
	}
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM benchctl_fleet_result WHERE comparison = 'cmp3'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d results of the comparison (%v), want 1", n, err)
	}
	if b, _ := os.ReadFile(mark); !strings.Contains(string(b), "BenchmarkCase0") {
		t.Errorf("the doomed agent claimed %q", b)
	}
}
