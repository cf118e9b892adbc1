package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// listening counts the database's backends whose last statement was a
// LISTEN: River's notifier holds one connection per client for it.
func listening(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'listen%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAPollOnlyAgentHoldsNoListeningConnection: a poll-only agent works
// its queue without a connection of its own for LISTEN; an agent that
// is not poll-only holds one (which the count sees).
func TestAPollOnlyAgentHoldsNoListeningConnection(t *testing.T) {
	pool := fleetDB(t)
	rec := &recorder{ran: map[string][]string{}}
	started(t, &Agent{Pool: pool, Class: "p", Name: "p1", Run: rec.runner("p1"), PollOnly: true})
	c, e := enqueued(t, pool, jobs("poll", "p", 3))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := c.Wait(ctx, e, 50*time.Millisecond, nil); err != nil {
		t.Fatalf("the poll-only agent's jobs: %v", err)
	}
	if n := listening(t, pool); n != 0 {
		t.Errorf("%d connection(s) LISTEN with a poll-only agent, want 0", n)
	}
	startAgent(t, pool, "p", "p2", rec.runner("p2"))
	deadline := time.Now().Add(10 * time.Second)
	for listening(t, pool) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("an agent that is not poll-only was never seen to LISTEN: the count cannot tell")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
