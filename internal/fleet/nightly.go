package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Nightly is a class's scheduled run: every Every, at At past each
// multiple of Every since the Unix epoch (Every 24h, At 3h: at 03:00
// UTC), the fleet's leader enqueues Job for that night, and an agent of
// the class runs it and delivers its file (Agent.Deliver). A class has
// one nightly: registering another replaces it.
type Nightly struct {
	Class string        `json:"class"`
	Every time.Duration `json:"every"`
	At    time.Duration `json:"at"`
	// Job is every night's job but its name: all the rounds of all the
	// cases of the program registered.
	Job Rounds `json:"job"`
}

// MinEvery is the shortest schedule: River's periodic jobs run no more
// often than once a second.
const MinEvery = time.Second

// check refuses a nightly that cannot be scheduled.
func (n Nightly) check() error {
	if err := checkSchedule(n.Class, n.Every, n.At); err != nil {
		return err
	}
	if len(n.Job.Sides) != 1 || len(n.Job.Cases) == 0 || n.Job.Count < 1 {
		return fmt.Errorf("nightly of class %s: want one program, some cases and some rounds", n.Class)
	}
	return nil
}

// checkSchedule refuses a class or a schedule a nightly cannot have.
func checkSchedule(class string, every, at time.Duration) error {
	if err := checkClass(class); err != nil {
		return err
	}
	if every < MinEvery || at < 0 || at >= every {
		return fmt.Errorf("nightly of class %s: every %s at %s: want every %s or longer, and at from 0 to less than every", class, every, at, MinEvery)
	}
	return nil
}

// Next is the first scheduled time after t (river.PeriodicSchedule).
func (n Nightly) Next(t time.Time) time.Time {
	next := n.Last(t)
	for !next.After(t) {
		next = next.Add(n.Every)
	}
	return next
}

// Last is the latest scheduled time at or before t: the night a job
// enqueued at t is for.
func (n Nightly) Last(t time.Time) time.Time {
	last := time.Unix(0, 0).UTC().Add(t.Sub(time.Unix(0, 0)) / n.Every * n.Every).Add(n.At)
	if last.After(t) {
		last = last.Add(-n.Every)
	}
	return last
}

// NightKind is the River kind of a [Night] job.
const NightKind = "benchctl_night"

// Night is one night's run of a class's nightly. It is unique by its
// class and night alone (River's unique fields), so one job a night gets
// in, whichever leader enqueues it and however often, and a nightly
// registered again (a newer program) runs from the next night on.
type Night struct {
	Class string `json:"class" river:"unique"`
	Night string `json:"night" river:"unique"`
	Job   Rounds `json:"job"`
}

// Kind is River's job kind.
func (Night) Kind() string { return NightKind }

// InsertOpts puts the night on its class's queue.
func (n Night) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueOf(n.Class), MaxAttempts: MaxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// night is the job of the night at: its comparison names the class and
// the night.
func (n Nightly) night(at time.Time) Night {
	stamp := at.UTC().Format("20060102T150405Z")
	j := n.Job
	j.Comparison, j.Class = "nightly-"+n.Class+"-"+stamp, n.Class
	return Night{Class: n.Class, Night: stamp, Job: j}
}

// RegisterNightly records n as its class's nightly, replacing the one
// before; the agents take it up within their NightlyPoll.
func RegisterNightly(ctx context.Context, pool *pgxpool.Pool, n Nightly) error {
	if err := n.check(); err != nil {
		return err
	}
	data, err := json.Marshal(n)
	if err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `INSERT INTO benchctl_fleet_nightly (class, nightly, registered_at) VALUES ($1, $2, now())
		ON CONFLICT (class) DO UPDATE SET nightly = $2, registered_at = now()`, n.Class, data); err != nil {
		return fmt.Errorf("fleet: registering the nightly of class %s: %w", n.Class, err)
	}
	return nil
}

// RemoveNightly removes class's nightly; it reports whether there was one.
func RemoveNightly(ctx context.Context, pool *pgxpool.Pool, class string) (bool, error) {
	tag, err := pool.Exec(ctx, `DELETE FROM benchctl_fleet_nightly WHERE class = $1`, class)
	if err != nil {
		return false, fmt.Errorf("fleet: removing the nightly of class %s: %w", class, err)
	}
	return tag.RowsAffected() > 0, nil
}

// Nightlies are the registered nightlies, by class.
func Nightlies(ctx context.Context, pool *pgxpool.Pool) ([]Nightly, error) {
	rows, err := pool.Query(ctx, `SELECT nightly FROM benchctl_fleet_nightly ORDER BY class`)
	if err != nil {
		return nil, fmt.Errorf("fleet: reading the nightlies: %w", err)
	}
	defer rows.Close()
	var out []Nightly
	for rows.Next() {
		var data []byte
		var n Nightly
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("fleet: reading the nightlies: %w", err)
		}
		if err := json.Unmarshal(data, &n); err != nil {
			return nil, fmt.Errorf("fleet: a nightly cannot be read: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// schedules keeps a River client's periodic jobs those of the registered
// nightlies: every client that may lead has them all (only the leader
// enqueues), whatever its own class.
type schedules struct {
	client *river.Client[pgx.Tx]
	have   map[string]scheduled // by class
}

type scheduled struct {
	handle rivertype.PeriodicJobHandle
	as     string // the nightly's JSON: a change replaces it
}

// sync adds, replaces and removes the client's periodic jobs to match ns.
func (s *schedules) sync(ns []Nightly) error {
	if s.have == nil {
		s.have = map[string]scheduled{}
	}
	seen := map[string]bool{}
	var errs []error
	for _, n := range ns {
		seen[n.Class] = true
		data, _ := json.Marshal(n)
		old, ok := s.have[n.Class]
		if ok && old.as == string(data) {
			continue
		}
		if ok {
			s.client.PeriodicJobs().Remove(old.handle)
			delete(s.have, n.Class)
		}
		if err := n.check(); err != nil {
			errs = append(errs, err)
			continue
		}
		h, err := s.client.PeriodicJobs().AddSafely(river.NewPeriodicJob(n, n.construct, &river.PeriodicJobOpts{
			ID: "benchctl_nightly_" + n.Class,
			// A leader elected after a night's time (the last one
			// stopped, or none ran) enqueues that night's job; one
			// done already is not enqueued again (unique).
			RunOnStart: true,
		}))
		if err != nil {
			errs = append(errs, fmt.Errorf("scheduling the nightly of class %s: %w", n.Class, err))
			continue
		}
		s.have[n.Class] = scheduled{handle: h, as: string(data)}
	}
	for class, sc := range s.have {
		if !seen[class] {
			s.client.PeriodicJobs().Remove(sc.handle)
			delete(s.have, class)
		}
	}
	return errors.Join(errs...)
}

// construct is the job of the night just due (river.PeriodicJobConstructor).
func (n Nightly) construct() (river.JobArgs, *river.InsertOpts) {
	j := n.night(n.Last(time.Now()))
	opts := j.InsertOpts()
	return j, &opts
}
