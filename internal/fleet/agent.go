package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// Runner runs one job on this machine and returns its result file (Go
// benchmark format, every round of every case of the job). attempt is
// River's attempt number, from 1.
type Runner func(ctx context.Context, job Rounds, attempt int) ([]byte, error)

// Measurer is a Runner that also returns each side's result.Run, as
// JSON, kept with the result file (a run's bench.json and JMH table are
// made from them).
type Measurer func(ctx context.Context, job Rounds, attempt int) (file, runs []byte, err error)

// Agent works the queue of one class of machines, one job at a time.
type Agent struct {
	Pool  *pgxpool.Pool
	Class string
	// Name is the agent's name in the results (its host, say).
	Name string
	// Run runs a job; Measure, when set, instead.
	Run     Runner
	Measure Measurer
	// RescueAfter is how long a job must have been running, beyond its
	// own Timeout, before the leader's rescuer makes it available again,
	// its agent presumed dead. 0 is River's default (an hour).
	RescueAfter time.Duration
	// PollOnly makes the agent hold no connection of its own for
	// PostgreSQL's LISTEN (River's poll-only mode): it looks for jobs
	// every 200 ms instead of being told. A fleet of hundreds of agents
	// needs it to stay within the database's connections, and an agent
	// behind PgBouncer in transaction mode cannot LISTEN at all.
	PollOnly bool
	// Logger receives River's log; nil discards it.
	Logger *slog.Logger
	// Deliver takes each job's result file once it is committed with the
	// job (to upload it to the results server, say); its error is
	// logged, the file staying in the fleet's database. nil keeps it
	// there only.
	Deliver func(ctx context.Context, d Done, file []byte) error
	// NightlyPoll is how often the registered nightlies are read again
	// (0: DefaultNightlyPoll): each agent schedules every class's, so
	// whichever leads enqueues them.
	NightlyPoll time.Duration

	client   *river.Client[pgx.Tx]
	stopBeat context.CancelFunc
}

// Start starts working the class's queue until ctx ends or Drain.
func (a *Agent) Start(ctx context.Context) error {
	if err := checkClass(a.Class); err != nil {
		return err
	}
	if (a.Run == nil && a.Measure == nil) || a.Pool == nil {
		return errors.New("fleet agent: no pool or no runner")
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &roundsWorker{a: a}); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, &nightWorker{a: a}); err != nil {
		return err
	}
	logger := a.log()
	c, err := river.NewClient(riverpgxv5.New(a.Pool), &river.Config{
		ID:                   a.Name,
		Queues:               map[string]river.QueueConfig{QueueOf(a.Class): {MaxWorkers: 1}},
		Workers:              workers,
		JobTimeout:           -1, // each job's own (roundsWorker.Timeout)
		RescueStuckJobsAfter: a.RescueAfter,
		FetchPollInterval:    200 * time.Millisecond,
		PollOnly:             a.PollOnly,
		Logger:               logger,
	})
	if err != nil {
		return fmt.Errorf("fleet agent: %w", err)
	}
	a.client = c
	if err := c.Start(ctx); err != nil {
		return err
	}
	beat, stop := context.WithCancel(ctx)
	a.stopBeat = stop
	go a.beat(beat)
	go a.schedule(beat)
	return nil
}

// DefaultNightlyPoll is how often an agent reads the nightlies again.
const DefaultNightlyPoll = 30 * time.Second

// schedule keeps the client's periodic jobs the registered nightlies',
// until ctx ends.
func (a *Agent) schedule(ctx context.Context) {
	s := &schedules{client: a.client}
	for {
		ns, err := Nightlies(ctx, a.Pool)
		if err == nil {
			err = s.sync(ns)
		}
		if err != nil && ctx.Err() == nil {
			a.log().Warn("fleet agent: scheduling the nightlies", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(cmp.Or(a.NightlyPoll, DefaultNightlyPoll)):
		}
	}
}

// log is the agent's Logger, or one that discards.
func (a *Agent) log() *slog.Logger {
	if a.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Logger
}

// roundsWorker runs a job and records its result with the job's
// completion, in one transaction.
type roundsWorker struct {
	river.WorkerDefaults[Rounds]
	a *Agent
}

// Timeout is the job's own bound: River cancels a run past it, and its
// rescuer takes back a job running that long (and RescueAfter) whose
// agent died. (No timeout, -1, would never be rescued.)
func (w *roundsWorker) Timeout(job *river.Job[Rounds]) time.Duration { return job.Args.timeout() }

func (w *roundsWorker) Work(ctx context.Context, job *river.Job[Rounds]) error {
	return work(ctx, w.a, job, job.Args, "")
}

// nightWorker runs a night's job as roundsWorker runs any.
type nightWorker struct {
	river.WorkerDefaults[Night]
	a *Agent
}

func (w *nightWorker) Timeout(job *river.Job[Night]) time.Duration { return job.Args.Job.timeout() }

func (w *nightWorker) Work(ctx context.Context, job *river.Job[Night]) error {
	return work(ctx, w.a, job, job.Args.Job, job.Args.Night)
}

// Done is a job whose result file is committed, as Agent.Deliver is
// told of it.
type Done struct {
	Job        int64 // River's ID
	Comparison string
	Attempt    int
	Night      string // a nightly's night; "" for a comparison's job
}

// work runs rounds, job's (of night, for a nightly's), records the
// result with the job's completion, in one transaction, and delivers it.
func work[T river.JobArgs](ctx context.Context, a *Agent, job *river.Job[T], rounds Rounds, night string) error {
	measure := a.Measure
	if measure == nil {
		measure = func(ctx context.Context, job Rounds, attempt int) ([]byte, []byte, error) {
			file, err := a.Run(ctx, job, attempt)
			return file, nil, err
		}
	}
	file, runs, err := measure(ctx, rounds, job.Attempt)
	if err != nil {
		return err
	}
	// Minutes of machine time are not lost to a database restarting
	// while they ran: the result is offered again until it is taken.
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		err = complete(ctx, a, job, rounds.Comparison, file, runs)
		if err == nil && a.Deliver != nil {
			d := Done{Job: job.ID, Comparison: rounds.Comparison, Attempt: job.Attempt, Night: night}
			if err := a.Deliver(ctx, d, file); err != nil {
				a.log().Warn("fleet agent: delivering a job's file failed; it is kept in the fleet's database", "job", job.ID, "comparison", rounds.Comparison, "error", err)
			}
		}
		if err == nil || ctx.Err() != nil || !transient(err) {
			return err
		}
		a.log().Warn("fleet agent: recording a job's result failed; trying again", "job", job.ID, "error", err, "in", wait)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// transient is whether err is the database's absence rather than its
// answer: no connection, or PostgreSQL's classes 08 (connection
// exception), 53 (insufficient resources) and 57 (operator
// intervention: shutting down, starting up). An answer (a conflict, a
// constraint) would be the same again.
func transient(err error) bool {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return true
	}
	switch pg.Code[:2] {
	case "08", "53", "57":
		return true
	}
	return false
}

// complete records job's result, of comparison, and completes it, in
// one transaction.
func complete[T river.JobArgs](ctx context.Context, a *Agent, job *river.Job[T], comparison string, file, runs []byte) error {
	tx, err := a.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO benchctl_fleet_result (job_id, comparison, agent, attempt, file, runs) VALUES ($1, $2, $3, $4, $5, $6)`,
		job.ID, comparison, a.Name, job.Attempt, file, runs); err != nil {
		return fmt.Errorf("recording the result of job %d: %w", job.ID, err)
	}
	if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
		return fmt.Errorf("completing job %d: %w", job.ID, err)
	}
	return tx.Commit(ctx)
}

// heartbeat is how often a working agent says it is there.
const heartbeat = 10 * time.Second

// beat records, every heartbeat until ctx ends, that the agent is
// working its class's queue: a coordinator that sees no agent of its
// class says so instead of waiting.
func (a *Agent) beat(ctx context.Context) {
	for {
		_, _ = a.Pool.Exec(ctx, `INSERT INTO benchctl_fleet_agent (name, class, seen_at) VALUES ($1, $2, now())
			ON CONFLICT (name) DO UPDATE SET class = $2, seen_at = now()`, a.Name, a.Class)
		select {
		case <-ctx.Done():
			return
		case <-time.After(heartbeat):
		}
	}
}

// Seen counts the agents of class seen within the last within.
func Seen(ctx context.Context, pool *pgxpool.Pool, class string, within time.Duration) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM benchctl_fleet_agent WHERE class = $1 AND seen_at > now() - make_interval(secs => $2)`,
		class, within.Seconds()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("fleet: reading the agents: %w", err)
	}
	return n, nil
}

// Drain stops the agent: the job it runs may finish within timeout, and
// no other is claimed; past timeout the job is cancelled and River
// releases it (available again at once, the interrupted attempt not
// counted) for another agent; nothing of the cancelled run is kept.
func (a *Agent) Drain(timeout time.Duration) error {
	if a.client == nil {
		return nil
	}
	a.stopBeat()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := a.client.Stop(ctx); err == nil {
		return nil
	}
	hard, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return a.client.StopAndCancel(hard)
}
