package fleet

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// fleetDB is a migrated database of the test's own.
func fleetDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := Open(t.Context(), testenv.PostgresDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := Migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	// Twice: a second start of the server migrates nothing.
	if err := Migrate(t.Context(), pool); err != nil {
		t.Fatalf("migrating again: %v", err)
	}
	return pool
}

// startAgent starts an agent, stopped at the test's end.
func startAgent(t *testing.T, pool *pgxpool.Pool, class, name string, run Runner) *Agent {
	t.Helper()
	return started(t, &Agent{Pool: pool, Class: class, Name: name, Run: run})
}

// started starts a, stopped at the test's end.
func started(t *testing.T, a *Agent) *Agent {
	t.Helper()
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Drain(10 * time.Second)
	})
	return a
}

// enqueued inserts js by a coordinator of pool's.
func enqueued(t *testing.T, pool *pgxpool.Pool, js []Rounds) (*Coordinator, *Enqueued) {
	t.Helper()
	c, err := NewCoordinator(pool)
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.Enqueue(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	return c, e
}

func jobs(comparison, class string, n int) []Rounds {
	out := make([]Rounds, n)
	for i := range out {
		out[i] = Rounds{Comparison: comparison, Class: class, Cases: []string{fmt.Sprintf("BenchmarkCase%d", i%3)},
			Sides: []Artifact{{Side: "baseline", SHA256: "aa"}, {Side: "experiment", SHA256: "bb"}}, First: 1 + i/3*2, Count: 2}
	}
	return out
}

// recorder is a runner that records which agent ran which job, taking
// 100 ms a job.
type recorder struct {
	mu  sync.Mutex
	ran map[string][]string // agent → "case rounds"
}

func (r *recorder) runner(agent string) Runner {
	return func(ctx context.Context, j Rounds, attempt int) ([]byte, error) {
		time.Sleep(100 * time.Millisecond)
		key := fmt.Sprintf("%s %d", j.Cases[0], j.First)
		r.mu.Lock()
		r.ran[agent] = append(r.ran[agent], key)
		r.mu.Unlock()
		return []byte(agent + ": " + key), nil
	}
}

// deliveryLog records the files Agent.Deliver is given, by job, each
// once, of comparison, at the first attempt.
type deliveryLog struct {
	t          *testing.T
	comparison string
	mu         sync.Mutex
	files      map[int64]string
}

func (l *deliveryLog) deliver(_ context.Context, d Done, file []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.files[d.Job]; ok || d.Comparison != l.comparison || d.Attempt != 1 || d.Night != "" {
		l.t.Errorf("delivered %+v (delivered before: %v)", d, ok)
	}
	l.files[d.Job] = string(file)
	return nil
}

// check waits for every job of ids to be delivered, with the file
// committed (rs, in job order).
func (l *deliveryLog) check(ids []int64, rs []Result) {
	l.t.Helper()
	waitFor(l.t, "every result delivered", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.files) == len(ids) })
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, id := range ids {
		if got := l.files[id]; got != string(rs[i].File) {
			l.t.Errorf("job %d delivered %q, committed %q", id, got, rs[i].File)
		}
	}
}

// TestTwoAgentsShareAComparison: 9 jobs of class a over two agents of
// class a and one of class b. Each job runs once, the two a agents share
// them, the b agent gets none; the results come back in job order, each
// the file its agent made, and each is delivered once, after it is
// committed; the same comparison enqueued again (a coordinator started
// again) takes back the 9 jobs and runs none.
func TestTwoAgentsShareAComparison(t *testing.T) {
	pool := fleetDB(t)
	rec := &recorder{ran: map[string][]string{}}
	dl := &deliveryLog{t: t, comparison: "cmp1", files: map[int64]string{}}
	for _, a := range []struct{ class, name string }{{"a", "a1"}, {"a", "a2"}, {"b", "b1"}} {
		started(t, &Agent{Pool: pool, Class: a.class, Name: a.name, Run: rec.runner(a.name), Deliver: dl.deliver})
	}
	c, err := NewCoordinator(pool)
	if err != nil {
		t.Fatal(err)
	}
	js := jobs("cmp1", "a", 9)
	e, err := c.Enqueue(t.Context(), js)
	if err != nil || e.Resumed != 0 {
		t.Fatalf("enqueue: %+v, %v", e, err)
	}
	var seen []Progress
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := c.Wait(ctx, e, 50*time.Millisecond, func(p Progress) error { seen = append(seen, p); return nil }); err != nil {
		t.Fatalf("wait: %v (progress %v)", err, seen)
	}
	if last := seen[len(seen)-1]; last.Done != 9 || last.Failed != 0 {
		t.Errorf("last progress %v", last)
	}
	rs, err := c.Results(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		want := fmt.Sprintf("%s: %s %d", r.Agent, js[i].Cases[0], js[i].First)
		if string(r.File) != want || r.Attempt != 1 {
			t.Errorf("result %d: %q attempt %d, want %q attempt 1", i, r.File, r.Attempt, want)
		}
	}
	dl.check(e.IDs, rs)
	rec.mu.Lock()
	if n := len(rec.ran["a1"]) + len(rec.ran["a2"]); n != 9 || len(rec.ran["a1"]) == 0 || len(rec.ran["a2"]) == 0 || len(rec.ran["b1"]) != 0 {
		t.Errorf("runs by agent: %v; want 9 over a1 and a2, none on b1", rec.ran)
	}
	rec.mu.Unlock()
	again, err := c.Enqueue(t.Context(), js)
	if err != nil || again.Resumed != 9 || fmt.Sprint(again.IDs) != fmt.Sprint(e.IDs) {
		t.Fatalf("enqueued again: %+v, %v; want the 9 jobs back", again, err)
	}
	if err := c.Wait(ctx, again, 50*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if n := len(rec.ran["a1"]) + len(rec.ran["a2"]); n != 9 {
		t.Errorf("after the second enqueue %d runs, want still 9: %v", n, rec.ran)
	}
}

// TestAFailingJobNamesItsCases: a job whose runner fails on every attempt
// is discarded after MaxAttempts, and Wait names its cases, its rounds,
// the attempts and the error.
func TestAFailingJobNamesItsCases(t *testing.T) {
	pool := fleetDB(t)
	var attempts atomic.Int32
	startAgent(t, pool, "a", "a1", func(ctx context.Context, j Rounds, attempt int) ([]byte, error) {
		attempts.Add(1)
		return nil, fmt.Errorf("fork 1 of %s exited 2", j.Cases[0])
	})
	c, e := enqueued(t, pool, jobs("cmp2", "a", 1))
	// River's retry backoff grows as attempt⁴ seconds: 1 s, then 16 s.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := c.Wait(ctx, e, 100*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "(rounds 1–2 of BenchmarkCase0) failed on 3 attempt(s), by a1, a1, a1: fork 1 of BenchmarkCase0 exited 2") {
		t.Errorf("wait: %v", err)
	}
	if n := attempts.Load(); n != MaxAttempts {
		t.Errorf("%d attempts, want %d", n, MaxAttempts)
	}
}

// TestBadClass: a class that cannot name a queue is refused by the
// agent and the coordinator.
func TestBadClass(t *testing.T) {
	for _, class := range []string{"", "a b", "ä", strings.Repeat("x", 65), "-a"} {
		if err := checkClass(class); err == nil {
			t.Errorf("class %q accepted", class)
		}
	}
	if err := (&Agent{Class: "a b", Run: func(context.Context, Rounds, int) ([]byte, error) { return nil, nil }}).Start(t.Context()); err == nil || !strings.Contains(err.Error(), `class "a b"`) {
		t.Errorf("agent of class %q: %v", "a b", err)
	}
}
