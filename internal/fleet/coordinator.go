package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

// Coordinator inserts a comparison's jobs and gathers their results. It
// works no queue: its River client only inserts and reads jobs.
type Coordinator struct {
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx]
}

// NewCoordinator returns a coordinator on pool's database, whose River
// tables Migrate made.
func NewCoordinator(pool *pgxpool.Pool) (*Coordinator, error) {
	c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return nil, fmt.Errorf("fleet coordinator: %w", err)
	}
	return &Coordinator{pool: pool, client: c}, nil
}

// Enqueued is a comparison's jobs, in the order they were given.
type Enqueued struct {
	Comparison string
	Jobs       []Rounds
	IDs        []int64
	// Resumed counts the jobs that were in the queue already (inserted
	// by an earlier start of the same comparison), done or not.
	Resumed int
}

// Enqueue inserts jobs, all of one comparison; a job already in the
// queue with the same arguments (a coordinator started again) is not
// inserted twice but taken back.
func (c *Coordinator) Enqueue(ctx context.Context, jobs []Rounds) (*Enqueued, error) {
	if len(jobs) == 0 {
		return nil, errors.New("fleet: no job to enqueue")
	}
	e := &Enqueued{Comparison: jobs[0].Comparison, Jobs: jobs}
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		if j.Comparison != e.Comparison {
			return nil, fmt.Errorf("fleet: jobs of two comparisons (%q, %q) in one enqueue", e.Comparison, j.Comparison)
		}
		if err := checkClass(j.Class); err != nil {
			return nil, err
		}
		params[i] = river.InsertManyParams{Args: j}
	}
	res, err := c.client.InsertMany(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("fleet: inserting %d jobs: %w", len(jobs), err)
	}
	for _, r := range res {
		e.IDs = append(e.IDs, r.Job.ID)
		if r.UniqueSkippedAsDuplicate {
			e.Resumed++
		}
	}
	return e, nil
}

// Progress is where a comparison's jobs stand.
type Progress struct {
	Queued, Running, Done, Retrying, Failed int
	// Agents are the agents running a job now, by the client that
	// claimed it.
	Agents []string
	// Unreachable, when set, is why the jobs could not be read: the
	// counts are the last ones read, and the wait goes on (see Outage).
	Unreachable error
	// failure is the first job failed for good: its cases and error.
	failure error
}

func (p Progress) String() string {
	s := fmt.Sprintf("%d queued, %d running, %d done, %d retrying, %d failed", p.Queued, p.Running, p.Done, p.Retrying, p.Failed)
	if len(p.Agents) > 0 {
		s += " (on " + strings.Join(p.Agents, ", ") + ")"
	}
	if p.Unreachable != nil {
		s += "; the database is unreachable, still trying: " + strings.Join(strings.Fields(p.Unreachable.Error()), " ")
	}
	return s
}

// Outage is how long Wait rides out a database it cannot read (a
// restart, a failover) before it gives up; the jobs stay queued, and the
// same command started again takes them back.
const Outage = 5 * time.Minute

// Wait polls the jobs every interval, calling progress with where they
// stand, until every job is done, one has failed for good, or progress
// returns an error; a database that does not answer (transient) is
// polled again (progress is told) until it has not for Outage, one that
// answers with an error is not. It returns the failure, naming the job's
// cases and its last error, or progress's error.
func (c *Coordinator) Wait(ctx context.Context, e *Enqueued, interval time.Duration, progress func(Progress) error) error {
	var last Progress
	var down time.Time // when the database stopped answering
	for {
		p, err := c.poll(ctx, e)
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil && !transient(err):
			return err // the database's answer, not its absence
		case err != nil && down.IsZero():
			down = time.Now()
			fallthrough
		case err != nil:
			if time.Since(down) > Outage {
				return fmt.Errorf("%w (for %s)", err, time.Since(down).Round(time.Second))
			}
			p = last
			p.Agents, p.Unreachable = nil, err
		default:
			last, down = p, time.Time{}
		}
		var stop error
		if progress != nil {
			stop = progress(p)
		}
		if p.failure != nil {
			return p.failure
		}
		if stop != nil {
			return stop
		}
		if p.Done == len(e.IDs) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// poll reads the state of every job of e.
func (c *Coordinator) poll(ctx context.Context, e *Enqueued) (Progress, error) {
	var p Progress
	rows, err := c.client.JobList(ctx, river.NewJobListParams().IDs(e.IDs...).States(allStates...).First(len(e.IDs)))
	if err != nil {
		return p, fmt.Errorf("fleet: reading the jobs: %w", err)
	}
	for _, j := range rows.Jobs {
		switch j.State {
		case rivertype.JobStateCompleted:
			p.Done++
		case rivertype.JobStateRunning:
			p.Running++
			if n := len(j.AttemptedBy); n > 0 {
				p.Agents = append(p.Agents, j.AttemptedBy[n-1])
			}
		case rivertype.JobStateRetryable:
			p.Retrying++
		case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
			p.Failed++
			if p.failure == nil {
				p.failure = jobFailure(j, e)
			}
		default:
			p.Queued++
		}
	}
	return p, nil
}

var allStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateCancelled, rivertype.JobStateCompleted,
	rivertype.JobStateDiscarded, rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled}

// jobFailure names a failed job's cases and rounds and its last error.
func jobFailure(j *rivertype.JobRow, e *Enqueued) error {
	what := fmt.Sprintf("job %d", j.ID)
	for i, id := range e.IDs {
		if id == j.ID {
			r := e.Jobs[i]
			what = fmt.Sprintf("job %d (rounds %d–%d of %s)", j.ID, r.First, r.First+r.Count-1, strings.Join(r.Cases, ", "))
		}
	}
	last := "cancelled"
	if n := len(j.Errors); n > 0 {
		last = j.Errors[n-1].Error
	}
	return fmt.Errorf("fleet: %s failed on %d attempt(s), by %s: %s", what, j.Attempt, strings.Join(j.AttemptedBy, ", "), last)
}

// Result is a job's result file and who made it.
type Result struct {
	JobID   int64
	Agent   string
	Attempt int
	File    []byte
	// Runs are the job's sides' result.Runs as JSON (nil when its
	// agent kept none).
	Runs []byte
}

// Results are the result files of e's jobs, in job order; a job without
// one is an error.
func (c *Coordinator) Results(ctx context.Context, e *Enqueued) ([]Result, error) {
	rows, err := c.pool.Query(ctx, `SELECT job_id, agent, attempt, file, runs FROM benchctl_fleet_result WHERE job_id = ANY($1)`, e.IDs)
	if err != nil {
		return nil, fmt.Errorf("fleet: reading the results: %w", err)
	}
	by := map[int64]Result{}
	for rows.Next() {
		var r Result
		if err := rows.Scan(&r.JobID, &r.Agent, &r.Attempt, &r.File, &r.Runs); err != nil {
			return nil, err
		}
		by[r.JobID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(e.IDs))
	for _, id := range e.IDs {
		r, ok := by[id]
		if !ok {
			return nil, fmt.Errorf("fleet: job %d has no result", id)
		}
		out = append(out, r)
	}
	return out, nil
}
