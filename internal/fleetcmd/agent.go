package fleetcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/fleet"
	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/session"
	"github.com/ledgerbench/ledgerbench/internal/upload"
)

// agentFlags are agent's flags.
type agentFlags struct {
	db, class, name, dir, cpus, lock string
	server                           string
	ignoreLock, pollOnly             bool
	drain, rescueAfter               time.Duration
}

func agentCmd(name string) *cobra.Command {
	var f agentFlags
	c := &cobra.Command{
		Use:   "agent --db URL [--class C] [--name N] [--cpus LIST]",
		Short: "Work a fleet's queue on this machine: run the rounds of the comparisons of its class",
		Long: fmt.Sprintf(`agent runs on each benchmark machine of a fleet. It checks the host, holds its run lock, and
works the queue of its class (by default the host's machine-id: machines of one hardware
fingerprint form a class, and a job never runs on another), one job at a time: it fetches the job's
programs (an A/B's two, a run's one) by their SHA-256 (a program whose bytes do not hash to it is refused, and the job
failed with the reason), runs the job's rounds with the engine (forks pinned to --cpus) and commits
the results file with the job, in one transaction. It needs no Go toolchain and no checkout.

Every agent schedules the registered nightlies (nightly --fleet), whatever its class: the one River
elects leader enqueues each class's night, and an agent of that class runs it. With --server the
agent uploads each job's results file (an A/B's rounds, a run's, a night's) to the results server,
labelled fleet-comparison, fleet-job and fleet-attempt (its token in $%[1]s, spooled under
--dir until the server takes it), so the server keeps each machine's nightly series; without it the
files stay in the fleet's database only.

On SIGTERM or SIGINT it drains: the job it runs finishes, within --drain, and no other is taken;
past --drain the job is cancelled and River releases it to another agent. An agent that dies (SIGKILL,
a lost machine) has its job rescued by River after the job's timeout and --rescue-after.`, payload.TokenEnv),
		Example: fmt.Sprintf(`  %[1]s fleet migrate --db postgres://bench@db.internal:5432/results
  %[1]s agent --db postgres://bench@db.internal:5432/results --cpus 2-3 --server https://bench.internal`, name),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd.Context(), name, strings.Join(os.Args, " "))
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.db, "db", "", "the fleet's PostgreSQL database (postgres://USER@HOST:PORT/DB), migrated by fleet migrate")
	fl.StringVar(&f.class, "class", "", "the class of machines whose jobs to run (default: this host's machine-id)")
	fl.StringVar(&f.name, "name", "", "the agent's name in progress and results, unique in the fleet (default: the host name and machine-id)")
	fl.StringVar(&f.dir, "dir", "", "where programs are cached and fork logs kept (default: the user cache directory's benchctl/agent)")
	fl.StringVar(&f.cpus, "cpus", "", "pin every fork to these CPUs (2,3 or 2-3) and set GOMAXPROCS to their number")
	fl.StringVar(&f.lock, "lock", hostcheck.DefaultLockPath(), "the host's run lock, held while the agent works")
	fl.BoolVar(&f.ignoreLock, "ignore-lock", false, "work without the host's run lock (two agents on one host, each on its own --cpus)")
	fl.DurationVar(&f.drain, "drain", 10*time.Minute, "on SIGTERM, how long the running job may take to finish before it is cancelled and retried elsewhere")
	fl.BoolVar(&f.pollOnly, "poll-only", false, "hold no connection for PostgreSQL's LISTEN, and look for jobs every 200 ms instead: for a fleet of hundreds of agents (each LISTEN holds one of the database's connections), or PgBouncer in transaction mode")
	fl.StringVar(&f.server, "server", "", "upload each job's results file (nightly --fleet's nights among them) to this results server")
	fl.DurationVar(&f.rescueAfter, "rescue-after", time.Hour, "how long past its timeout a running job whose agent died is left before it is given to another")
	return c
}

// run checks the host and works the queue until ctx ends, then drains.
func (f *agentFlags) run(ctx context.Context, name, command string) error {
	if f.db == "" {
		return usageError(errors.New("--db is required: the fleet's PostgreSQL database"))
	}
	if f.drain <= 0 || f.rescueAfter <= 0 {
		return usageError(errors.New("--drain and --rescue-after must be positive"))
	}
	env := &session.Env{Name: name, Command: command, Stderr: os.Stderr}
	eo := engine.DefaultOptions()
	s, err := session.Prepare(ctx, env, session.HostOptions{CPUs: f.cpus, Lock: f.lock, IgnoreLock: f.ignoreLock}, &eo)
	if err != nil {
		return exitOf(err)
	}
	defer s.Release()
	if f.class == "" {
		f.class = s.Check.MachineID
	}
	if f.name == "" {
		host, _ := os.Hostname()
		f.name = host + "-" + s.Check.MachineID
	}
	if f.dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return usageError(fmt.Errorf("no cache directory (%v): give --dir", err))
		}
		f.dir = filepath.Join(cache, "benchctl", "agent")
	}
	pool, err := openFleet(ctx, f.db)
	if err != nil {
		return err
	}
	defer pool.Close()
	m := &fleet.Machine{Pool: pool, Session: s, CPUs: eo.CPUs, Dir: f.dir, Name: f.name}
	// River's warnings and errors (a database gone away, a job failed)
	// and the agent's own go to stderr, as the operator's log.
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a := &fleet.Agent{Pool: pool, Class: f.class, Name: f.name, Measure: m.Measure, RescueAfter: f.rescueAfter, PollOnly: f.pollOnly, Logger: log}
	if f.server != "" {
		a.Deliver = Uploader(env, f.server, &upload.Spool{Dir: filepath.Join(f.dir, "spool"), Token: os.Getenv(payload.TokenEnv)})
	}
	// River stops at once when Start's context ends: the agent's ends
	// only when it has drained.
	if err := a.Start(context.WithoutCancel(ctx)); err != nil {
		return usageError(err)
	}
	env.Say("agent %s works the queue of class %s (host %s; CPUs %v)", f.name, f.class, s.Check.Verdict(), eo.CPUs)
	if f.server == "" {
		env.Say("agent %s: no --server: the jobs' results stay in the fleet's database", f.name)
	}
	<-ctx.Done()
	env.Say("agent %s draining: the running job may take %s to finish", f.name, f.drain)
	return a.Drain(f.drain)
}

// Uploader delivers each job's results file to server through spool, as
// an upload of its own labelled with the job (fleet-comparison,
// fleet-job, fleet-attempt), saying what became of it; a file the server
// did not take stays spooled (and is sent again with the next job's).
func Uploader(env *session.Env, server string, spool *upload.Spool) func(context.Context, fleet.Done, []byte) error {
	return func(ctx context.Context, d fleet.Done, file []byte) error {
		if _, err := spool.Flush(ctx, server, false); err != nil {
			env.Say("agent: the spool %s: %v", spool.Dir, err)
		}
		name := fmt.Sprintf("%s-job%d.txt", d.Comparison, d.Job)
		if d.Night != "" {
			name = d.Comparison + ".txt"
		}
		labels := fmt.Sprintf("fleet-comparison: %s\nfleet-job: %d\nfleet-attempt: %d\n", d.Comparison, d.Job, d.Attempt)
		r := spool.Send(ctx, server, []payload.File{{Name: name, Data: labelled(file, labels)}})
		if r.Err != nil {
			if r.Spooled {
				return fmt.Errorf("upload %s to %s: %w (spooled: sent again with the next job's)", r.ID, server, r.Err)
			}
			return fmt.Errorf("upload %s to %s: %w (not spooled: %v)", r.ID, server, r.Err, r.SpoolErr)
		}
		env.Say("agent: %s uploaded to %s as %s", name, server, r.ID)
		return nil
	}
}

// labelled is file with the configuration lines labels before its first
// result, so that every result has them.
func labelled(file []byte, labels string) []byte {
	at := 0
	for at < len(file) && !bytes.HasPrefix(file[at:], []byte("Benchmark")) {
		nl := bytes.IndexByte(file[at:], '\n')
		if nl < 0 {
			at = len(file)
			break
		}
		at += nl + 1
	}
	head := file[:at]
	if len(head) > 0 && head[len(head)-1] != '\n' {
		head = append(slices.Clip(head), '\n') // a last line without its newline
	}
	return slices.Concat(head, []byte(labels), file[at:])
}
