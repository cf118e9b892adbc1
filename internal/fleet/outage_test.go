package fleet

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// proxy forwards TCP connections to a database: Cut drops every
// connection and refuses new ones, as a database restarting does, and
// Restore listens again on the same address.
type proxy struct {
	t        *testing.T
	addr, to string
	mu       sync.Mutex
	ln       net.Listener
	conns    []net.Conn
}

func startProxy(t *testing.T, to string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, addr: ln.Addr().String(), to: to}
	p.serve(ln)
	t.Cleanup(p.Cut)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("tcp", p.to)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, d)
			p.mu.Unlock()
			go func() { io.Copy(d, c); d.Close() }()
			go func() { io.Copy(c, d); c.Close() }()
		}
	}()
}

func (p *proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) Restore() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.serve(ln)
}

// TestADatabaseOutageLosesNothing: the database goes away while an agent
// measures a job and comes back a few seconds later. The coordinator
// rides it out (its progress says the database is unreachable), the
// agent records the result it measured once the database is back, and
// the job is done on its first attempt, its result recorded once.
func TestADatabaseOutageLosesNothing(t *testing.T) {
	u, err := url.Parse(testenv.PostgresDB(t))
	if err != nil {
		t.Fatal(err)
	}
	px := startProxy(t, u.Host)
	u.Host = px.addr
	pool, err := Open(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := Migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	started, finish := make(chan struct{}), make(chan struct{})
	var once sync.Once
	startAgent(t, pool, "o", "o1", func(ctx context.Context, job Rounds, attempt int) ([]byte, error) {
		once.Do(func() { close(started) })
		<-finish
		return []byte("measured during the outage"), nil
	})
	c, e := enqueued(t, pool, jobs("outage", "o", 1))
	unreachable := 0 // counted by Wait's goroutine, read after it returned
	waited := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		waited <- c.Wait(ctx, e, 50*time.Millisecond, func(p Progress) error {
			if p.Unreachable != nil {
				unreachable++
			}
			return nil
		})
	}()
	<-started
	px.Cut()
	close(finish) // the job ends while the database is away
	time.Sleep(3 * time.Second)
	px.Restore()
	if err := <-waited; err != nil {
		t.Fatalf("wait: %v", err)
	}
	if unreachable == 0 {
		t.Error("the coordinator's progress never said the database was unreachable")
	}
	rs, err := c.Results(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || string(rs[0].File) != "measured during the outage" || rs[0].Attempt != 1 {
		t.Errorf("results %+v, want the one measured during the outage, on attempt 1", rs)
	}
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM benchctl_fleet_result WHERE comparison = 'outage'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d results recorded (%v), want 1", n, err)
	}
}

// TestTransientErrors: the database's absence is tried again, its
// answers are not.
func TestTransientErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{io.ErrUnexpectedEOF, true},
		{&pgconn.PgError{Code: "57P01"}, true}, // admin_shutdown
		{&pgconn.PgError{Code: "57P03"}, true}, // cannot_connect_now
		{&pgconn.PgError{Code: "08006"}, true}, // connection_failure
		{&pgconn.PgError{Code: "53300"}, true}, // too_many_connections
		{&pgconn.PgError{Code: "23505"}, false},
		{&pgconn.PgError{Code: "42P01"}, false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestADatabaseThatAnswersWithAnErrorIsNotWaitedFor: an error the
// database answers with (here: River's jobs table gone) ends the wait at
// once, where its absence would be ridden out.
func TestADatabaseThatAnswersWithAnErrorIsNotWaitedFor(t *testing.T) {
	pool := fleetDB(t)
	c, e := enqueued(t, pool, jobs("gone", "g", 1))
	if _, err := pool.Exec(t.Context(), `DROP TABLE river_job CASCADE`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err := c.Wait(ctx, e, 50*time.Millisecond, nil)
	if err == nil || ctx.Err() != nil || time.Since(start) > 10*time.Second {
		t.Errorf("wait: %v after %s, want the database's error at once", err, time.Since(start).Round(time.Millisecond))
	}
}
