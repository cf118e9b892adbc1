package fleet

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestADrainingAgentFinishesItsJobAndTakesNoOther: an agent told to
// drain while it runs a job finishes it (its result is kept, attempt 1)
// and claims none of the jobs still queued; drained past its bound, an
// agent's job is cancelled and released (River puts it back at once, the
// attempt not counted), another agent runs it, and the cancelled
// attempt's result is never kept.
func TestADrainingAgentFinishesItsJobAndTakesNoOther(t *testing.T) {
	pool := fleetDB(t)
	started := make(chan struct{}, 8)
	var ran atomic.Int32
	slow := func(d time.Duration) Runner {
		return func(ctx context.Context, j Rounds, attempt int) ([]byte, error) {
			started <- struct{}{}
			select {
			case <-time.After(d):
				ran.Add(1)
				return []byte("done"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	a := &Agent{Pool: pool, Class: "d", Name: "drained", Run: slow(time.Second)}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, _ := NewCoordinator(pool)
	e, err := c.Enqueue(t.Context(), jobs("drain", "d", 3))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if err := a.Drain(30 * time.Second); err != nil {
		t.Fatalf("drain: %v", err)
	}
	p, err := c.poll(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	if p.Done != 1 || p.Queued != 2 || ran.Load() != 1 {
		t.Errorf("after draining: %v, %d run; want the running job done and 2 still queued", p, ran.Load())
	}

	// Drained past its bound: the job goes back to the queue.
	b := &Agent{Pool: pool, Class: "d", Name: "cut", Run: slow(time.Hour)}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := b.Drain(200 * time.Millisecond); err != nil {
		t.Fatalf("drain past the bound: %v", err)
	}
	startAgent(t, pool, "d", "finisher", slow(10*time.Millisecond))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := c.Wait(ctx, e, 50*time.Millisecond, nil); err != nil {
		t.Fatalf("wait: %v", err)
	}
	rs, err := c.Results(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	// River releases the job a stopping client cancels: available again
	// at once, the interrupted attempt not counted.
	by, later := map[string]int{}, 0
	for _, r := range rs {
		by[r.Agent]++
		if r.Attempt != 1 {
			later++
		}
	}
	if by["drained"] != 1 || by["cut"] != 0 || by["finisher"] != 2 || later != 0 {
		t.Errorf("results by agent %v, %d of them past attempt 1; want drained's one, none of the cut agent, the finisher's two, each attempt 1", by, later)
	}
}
