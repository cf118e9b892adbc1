package fleet

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNightlySchedule(t *testing.T) {
	day := Nightly{Every: 24 * time.Hour, At: 3 * time.Hour}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		n          Nightly
		now        string
		last, next string
	}{
		{day, "2026-12-05T13:00:00Z", "2026-12-05T03:00:00Z", "2026-12-06T03:00:00Z"},
		{day, "2026-12-05T02:59:59Z", "2026-12-04T03:00:00Z", "2026-12-05T03:00:00Z"},
		{day, "2026-12-05T03:00:00Z", "2026-12-05T03:00:00Z", "2026-12-06T03:00:00Z"},
		// A time in another zone is the same instant.
		{day, "2026-12-05T04:30:00+02:00", "2026-12-04T03:00:00Z", "2026-12-05T03:00:00Z"}, // 02:30 UTC
		{Nightly{Every: 2 * time.Second}, "2026-12-05T13:00:01.5Z", "2026-12-05T13:00:00Z", "2026-12-05T13:00:02Z"},
		{Nightly{Every: time.Hour, At: 15 * time.Minute}, "2026-12-05T13:10:00Z", "2026-12-05T12:15:00Z", "2026-12-05T13:15:00Z"},
	} {
		now := at(tc.now)
		if got := tc.n.Last(now); !got.Equal(at(tc.last)) {
			t.Errorf("every %s at %s, now %s: last %s, want %s", tc.n.Every, tc.n.At, tc.now, got.UTC(), tc.last)
		}
		if got := tc.n.Next(now); !got.Equal(at(tc.next)) {
			t.Errorf("every %s at %s, now %s: next %s, want %s", tc.n.Every, tc.n.At, tc.now, got.UTC(), tc.next)
		}
	}
	job := Rounds{Sides: []Artifact{{SHA256: "aa"}}, Cases: []string{"BenchmarkA"}, Count: 1}
	for _, bad := range []Nightly{
		{Class: "c", Every: 500 * time.Millisecond, Job: job},
		{Class: "c", Every: time.Hour, At: time.Hour, Job: job},
		{Class: "c", Every: time.Hour, At: -time.Second, Job: job},
		{Class: "c d", Every: time.Hour, Job: job},
		{Class: "c", Every: time.Hour, Job: Rounds{Cases: []string{"BenchmarkA"}, Count: 1}},
	} {
		if err := bad.check(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if n := day.night(at("2026-12-05T03:00:00Z")); n.Job.Comparison != "nightly--20261205T030000Z" || n.Night != "20261205T030000Z" {
		t.Errorf("the night's job: %+v", n)
	}
}

// deliveries records the nights delivered, by agent.
type deliveries struct {
	mu  sync.Mutex
	got map[string][]string // night → agents
	by  map[string]string   // night → program hash
}

func (d *deliveries) deliver(agent string) func(context.Context, Done, []byte) error {
	return func(_ context.Context, n Done, file []byte) error {
		d.mu.Lock()
		defer d.mu.Unlock()
		if !strings.Contains(string(file), n.Comparison) || n.Night == "" || !strings.HasSuffix(n.Comparison, n.Night) {
			return fmt.Errorf("night %s delivered as %+v: %q", n.Night, n, file)
		}
		d.got[n.Night] = append(d.got[n.Night], agent)
		d.by[n.Night] = strings.Fields(string(file))[len(strings.Fields(string(file)))-1]
		return nil
	}
}

func (d *deliveries) nights(hash string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for night, h := range d.by {
		if h == hash && len(d.got[night]) > 0 {
			n++
		}
	}
	return n
}

// waitFor polls cond for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// TestANightlyRunsOnceANight: a class's nightly is enqueued by the
// fleet's leader once a night (two agents of the class, and one of
// another that schedules it too, all able to lead), run by one agent of
// its class and delivered once; registered again with another program,
// the next nights run that; removed, no night follows.
func TestANightlyRunsOnceANight(t *testing.T) {
	pool := fleetDB(t)
	d := &deliveries{got: map[string][]string{}, by: map[string]string{}}
	run := func(_ context.Context, job Rounds, _ int) ([]byte, error) {
		return []byte("BenchmarkNight 1 1 ns/op\n# " + job.Comparison + " " + job.Sides[0].SHA256 + "\n"), nil
	}
	other := func(context.Context, Rounds, int) ([]byte, error) {
		return nil, fmt.Errorf("a job of another class ran")
	}
	for i, class := range []string{"nights", "nights", "days"} {
		name := fmt.Sprintf("agent-%d", i)
		a := &Agent{Pool: pool, Class: class, Name: name, Run: run, NightlyPoll: 200 * time.Millisecond, Deliver: d.deliver(name)}
		if class == "days" {
			a.Run = other
		}
		started(t, a)
	}
	n := Nightly{Class: "nights", Every: 2 * time.Second, Job: Rounds{Sides: []Artifact{{Side: "night", SHA256: "aa"}}, Cases: []string{"BenchmarkNight"}, Count: 1}}
	if err := RegisterNightly(t.Context(), pool, n); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "three nights of the first program", func() bool { return d.nights("aa") >= 3 })
	n.Job.Sides[0].SHA256 = "bb"
	if err := RegisterNightly(t.Context(), pool, n); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two nights of the second program", func() bool { return d.nights("bb") >= 2 })
	if ok, err := RemoveNightly(t.Context(), pool, "nights"); err != nil || !ok {
		t.Fatalf("RemoveNightly: %v, %v", ok, err)
	}
	time.Sleep(time.Second) // the agents read the nightlies again
	d.mu.Lock()
	before := len(d.got)
	d.mu.Unlock()
	time.Sleep(5 * time.Second)
	d.mu.Lock()
	defer d.mu.Unlock()
	if after := len(d.got); after > before+1 {
		t.Errorf("%d nights ran in the 5 s after the nightly was removed", after-before)
	}
	for night, agents := range d.got {
		if len(agents) != 1 {
			t.Errorf("night %s delivered %d times (by %v), want once", night, len(agents), agents)
		}
		if agents[0] == "agent-2" {
			t.Errorf("night %s ran on the agent of another class", night)
		}
	}
	var results, twice int
	if err := pool.QueryRow(t.Context(), `SELECT count(DISTINCT comparison), count(*) - count(DISTINCT comparison) FROM benchctl_fleet_result
		WHERE comparison LIKE 'nightly-nights-%'`).Scan(&results, &twice); err != nil {
		t.Fatal(err)
	}
	if results < len(d.got) || twice != 0 {
		t.Errorf("%d nights' results in the fleet's database (%d more of the same nights), %d delivered", results, twice, len(d.got))
	}
}
