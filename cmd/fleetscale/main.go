// Command fleetscale measures the parts of a fleet that grow with it,
// for the model in results/fleet/scale.md:
//
//   - River's claim rate on the fleet's PostgreSQL: --agents simulated
//     agents (fleet.Agent, each a River client working one class's queue
//     one job at a time) complete --jobs jobs whose runner returns a
//     result file of --file-kb at once; the rate is jobs completed per
//     second, from the enqueue to the last completion, through the
//     coordinator's own Enqueue, Wait and Results; the agents share one
//     connection pool (as behind PgBouncer) unless --pool-per-agent
//     gives each its own (as separate machines have), and LISTEN unless
//     --poll-only; the database's connections are counted when the last
//     job is done;
//
//   - a program's way to the agents: a random file of --artifact-mb MiB
//     published (fleet.Publish) and fetched --fetches times, each into an
//     empty cache (fleet.Fetch, its hash checked), one after another;
//
//   - the coordinator's merge: an A/B of --cases cases × --rounds rounds
//     measured by --machines machines (one file each, the cases dealt
//     round-robin with all their rounds, as a fleet's jobs hold them),
//     decided by compare.Build as ab --fleet decides it;
//     its time and the heap it allocated.
//
// For example:
//
//	go run ./cmd/fleetscale --db postgres://bench@127.0.0.1:54329/scale --agents 50 --jobs 5000 --cases 5000 --rounds 20 --machines 10
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/fleet"
)

func main() {
	db := flag.String("db", "", "the fleet's PostgreSQL database (its tables are migrated)")
	agents := flag.Int("agents", 50, "simulated agents")
	jobs := flag.Int("jobs", 5000, "jobs to claim and complete")
	fileKB := flag.Int("file-kb", 20, "the size of a job's result file")
	pollOnly := flag.Bool("poll-only", false, "the agents poll for jobs instead of LISTEN")
	perAgent := flag.Bool("pool-per-agent", false, "each agent has a connection pool of its own")
	cases := flag.Int("cases", 5000, "cases of the merged A/B")
	rounds := flag.Int("rounds", 20, "rounds of the merged A/B")
	machines := flag.Int("machines", 10, "machines whose files are merged")
	artifactMB := flag.Int("artifact-mb", 64, "the size of the published program (0: not measured)")
	fetches := flag.Int("fetches", 5, "fetches of the published program")
	flag.Parse()
	if *db != "" && *jobs > 0 {
		if err := claims(*db, *agents, *jobs, *fileKB, *pollOnly, *perAgent); err != nil {
			fmt.Fprintln(os.Stderr, "fleetscale:", err)
			os.Exit(1)
		}
	}
	if *db != "" && *artifactMB > 0 {
		if err := artifacts(*db, *artifactMB, *fetches); err != nil {
			fmt.Fprintln(os.Stderr, "fleetscale:", err)
			os.Exit(1)
		}
	}
	if *cases > 0 {
		if err := merge(*cases, *rounds, *machines); err != nil {
			fmt.Fprintln(os.Stderr, "fleetscale:", err)
			os.Exit(1)
		}
	}
}

// migrated opens the fleet's database at url and migrates it.
func migrated(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pool, err := fleet.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := fleet.Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// claims runs jobs over agents simulated agents and prints the rate.
func claims(url string, agents, jobs, fileKB int, pollOnly, perAgent bool) error {
	ctx := context.Background()
	pool, err := migrated(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	file := bytes.Repeat([]byte("x"), fileKB<<10)
	class := fmt.Sprintf("scale%d", time.Now().UnixNano())
	for i := range agents {
		own := pool
		if perAgent {
			if own, err = fleet.Open(ctx, url); err != nil {
				return err
			}
			defer own.Close()
		}
		a := &fleet.Agent{Pool: own, Class: class, Name: fmt.Sprintf("%s-%d", class, i), PollOnly: pollOnly,
			Run: func(context.Context, fleet.Rounds, int) ([]byte, error) { return file, nil }}
		if err := a.Start(ctx); err != nil {
			return err
		}
		defer a.Drain(10 * time.Second)
	}
	js := make([]fleet.Rounds, jobs)
	for i := range js {
		js[i] = fleet.Rounds{Comparison: class, Class: class, Cases: []string{fmt.Sprintf("BenchmarkCase%d", i)}, First: 1, Count: 1,
			Sides: []fleet.Artifact{{Side: "baseline", SHA256: "a"}, {Side: "experiment", SHA256: "b"}}}
	}
	c, err := fleet.NewCoordinator(pool)
	if err != nil {
		return err
	}
	start := time.Now()
	e, err := c.Enqueue(ctx, js)
	if err != nil {
		return err
	}
	enqueued := time.Since(start)
	if err := c.Wait(ctx, e, 100*time.Millisecond, nil); err != nil {
		return err
	}
	took := time.Since(start)
	var conns int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()`).Scan(&conns); err != nil {
		return err
	}
	rs, err := c.Results(ctx, e)
	if err != nil {
		return err
	}
	gathered := time.Since(start) - took
	fmt.Printf("claims: %d agents (poll-only %v, a pool each %v), %d jobs of %d KiB results: enqueued in %s, all completed in %s: %.0f jobs/s; results gathered (%d) in %s; %d connections to the database\n",
		agents, pollOnly, perAgent, jobs, fileKB, enqueued.Round(time.Millisecond), took.Round(time.Millisecond), float64(jobs)/took.Seconds(), len(rs), gathered.Round(time.Millisecond), conns)
	return nil
}

// artifacts publishes a random program of mb MiB and fetches it n
// times, printing the rates.
func artifacts(url string, mb, n int) error {
	ctx := context.Background()
	pool, err := migrated(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	dir, err := os.MkdirTemp("", "fleetscale")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	data := make([]byte, mb<<20)
	var seed [32]byte
	copy(seed[:], time.Now().String())
	rand.NewChaCha8(seed).Read(data) // a program never published before
	src := filepath.Join(dir, "program")
	if err := os.WriteFile(src, data, 0o755); err != nil {
		return err
	}
	start := time.Now()
	hash, err := fleet.Publish(ctx, pool, src)
	if err != nil {
		return err
	}
	published := time.Since(start)
	start = time.Now()
	for i := range n {
		if _, err := fleet.Fetch(ctx, pool, hash, filepath.Join(dir, fmt.Sprint("agent", i))); err != nil {
			return err
		}
	}
	fetched := time.Since(start) / time.Duration(max(n, 1))
	fmt.Printf("artifacts: a %d MiB program published in %s (%.0f MiB/s), fetched and checked in %s each (%.0f MiB/s, %d fetches)\n",
		mb, published.Round(time.Millisecond), float64(mb)/published.Seconds(), fetched.Round(time.Millisecond), float64(mb)/fetched.Seconds(), n)
	return nil
}

// merge writes the machines' files of an A/B and decides it as ab --fleet
// does, printing its time and allocations.
func merge(cases, rounds, machines int) error {
	dir, err := os.MkdirTemp("", "fleetscale")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rng := rand.New(rand.NewPCG(1, 2))
	var paths []string
	lines := 0
	for m := range machines {
		var b bytes.Buffer
		fmt.Fprintf(&b, "goos: linux\nmachine: host-%d\nmachine-id: class\n", m)
		for _, side := range []string{"baseline", "experiment"} {
			fmt.Fprintf(&b, "toolchain: %s\n", side)
			for r := range rounds {
				for c := m; c < cases; c += machines {
					for it := range 3 {
						fmt.Fprintf(&b, "BenchmarkCase%d-2 1000 %.3f ns/op\n# benchctl: fork=%d iter=%d mode=avgt\n", c, 100*(1+0.02*rng.NormFloat64()), r+1, it)
						lines++
					}
				}
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("host-%d.txt", m))
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			return err
		}
		paths = append(paths, p)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	co := ab.Verdicts(compare.DefaultAlpha, compare.DefaultMinChange, false)
	co.Ignore = compare.HostKeys
	ts, err := compare.Build(paths, co)
	if err != nil {
		return err
	}
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	rows := 0
	for _, t := range ts.Tables {
		rows += len(t.Rows)
	}
	fmt.Printf("merge: %d cases × %d rounds on %d machines (%d result lines): decided %d rows in %s, %d MiB allocated\n",
		cases, rounds, machines, lines, rows, took.Round(time.Millisecond), (after.TotalAlloc-before.TotalAlloc)>>20)
	return nil
}
