package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// DefaultJobTime is the planned length of a job (ab.DefaultJobTime).
const DefaultJobTime = ab.DefaultJobTime

// MinJobTimeout is the least a job may run before River cancels it: four
// times its planned length, but never less (a loaded machine, a -race
// build, runs a short job several times longer than planned).
const MinJobTimeout = 10 * time.Minute

// DefaultAbsent is how long a comparison waits for an agent of its
// class to be seen before it says there is none.
const DefaultAbsent = time.Minute

// MinJobRounds is the fewest rounds of a case a job holds when the
// case's rounds are cut over several jobs: each machine's pairs of a
// case are a stratum whose variance is its own, which one pair does not
// have and two barely estimate.
const MinJobRounds = 3

// Remote measures an A/B's rounds on the agents of one class: it is
// ab's Remote. Each job holds all the rounds of as many cases as fit in
// JobTime, so a case is usually measured on one machine; a case whose
// rounds do not fit in a job has them cut over several jobs of at least
// MinJobRounds rounds each (each machine's pairs a stratum). The
// programs are published by their hash; a comparison is named by what it
// measures (the programs, the cases, the plan), so a coordinator started
// again with the same arguments takes back its jobs, done or not, and
// measures nothing twice.
type Remote struct {
	Pool  *pgxpool.Pool
	Class string
	// JobTime is a job's planned length (0: DefaultJobTime); Poll how
	// often the jobs are looked at (0: a second); Absent how long to
	// wait for an agent of the class (0: DefaultAbsent).
	JobTime, Poll, Absent time.Duration
}

// Measure enqueues r's rounds, waits for them, saying where they stand
// when it changes, and writes each agent's files, one after another, to
// r.Dir/<agent>.txt.
func (f *Remote) Measure(ctx context.Context, env *session.Env, r ab.Rounds) ([]string, error) {
	jobs, err := f.plan(ctx, r)
	if err != nil {
		return nil, err
	}
	c, err := NewCoordinator(f.Pool)
	if err != nil {
		return nil, err
	}
	e, err := c.Enqueue(ctx, jobs)
	if err != nil {
		return nil, err
	}
	env.Say("fleet: comparison %.12s, %d job(s) on class %s (%d taken back from an earlier start)", e.Comparison, len(jobs), f.Class, e.Resumed)
	last, moved := "", time.Now()
	err = c.Wait(ctx, e, cmp.Or(f.Poll, time.Second), func(p Progress) error {
		if s := p.String(); s != last {
			env.Say("fleet: %s", s)
			last, moved = s, time.Now()
		}
		if p.Running > 0 || p.Unreachable != nil {
			moved = time.Now()
			return nil
		}
		return f.present(ctx, moved)
	})
	if err != nil {
		return nil, session.FailedError{Msg: err.Error()}
	}
	results, err := c.Results(ctx, e)
	if err != nil {
		return nil, session.FailedError{Msg: err.Error()}
	}
	paths, err := writeByAgent(r.Dir, results)
	if err != nil {
		return nil, err
	}
	runs, err := mergeRuns(jobs, results)
	if err == nil && runs != nil {
		err = writeRuns(r.Dir, runs)
	}
	if err != nil {
		env.Say("fleet: the runs of the jobs (for bench.json and the JMH table) are left out: %v", err)
	}
	return paths, nil
}

// describe publishes r's programs and describes its plan for the
// agents: the sides by hash, the spec (with the source tree's build when
// one program is run) and the cases' names.
func (f *Remote) describe(ctx context.Context, r ab.Rounds) ([]Artifact, Spec, []string, error) {
	var sides []Artifact
	for _, s := range r.Sides {
		a, err := f.publish(ctx, s)
		if err != nil {
			return nil, Spec{}, nil, err
		}
		sides = append(sides, a)
	}
	spec := Spec{Engine: r.Engine, Revs: r.Revs}
	spec.Engine.CPUs, spec.Engine.Forks = nil, 1 // each agent's own; a job's rounds are its own
	if len(sides) == 1 {
		spec.Build = session.BuildOf(report.CollectHeader("", ""))
	}
	var names []string
	for _, c := range r.Cases {
		d, err := engine.Describe(c)
		if err != nil {
			return nil, Spec{}, nil, session.Input("%v", err)
		}
		spec.Cases = append(spec.Cases, d)
		names = append(names, c.Name())
	}
	return sides, spec, names, nil
}

// publish publishes side s's program, or its packages' test binaries
// and directories.
func (f *Remote) publish(ctx context.Context, s engine.Side) (Artifact, error) {
	a := Artifact{Side: s.Name}
	var err error
	switch l := s.Launch.(type) {
	case engine.Program:
		if l.Executable == "" {
			return a, session.Input("side %s is not a built program: a fleet runs programs", s.Name)
		}
		a.SHA256, err = Publish(ctx, f.Pool, l.Executable)
	case engine.TestBinaries:
		for _, pkg := range slices.Sorted(maps.Keys(l)) {
			t := TestArtifact{Pkg: pkg}
			if t.Binary, err = Publish(ctx, f.Pool, l[pkg].Path); err != nil {
				break
			}
			if t.Dir, err = PublishDir(ctx, f.Pool, l[pkg].Dir); err != nil {
				break
			}
			a.Tests = append(a.Tests, t)
		}
	default:
		return a, session.Input("side %s is not a built program or test binaries: a fleet runs those", s.Name)
	}
	if err != nil {
		return a, session.FailedError{Msg: err.Error()}
	}
	return a, nil
}

// plan publishes r's programs and cuts its rounds into jobs.
func (f *Remote) plan(ctx context.Context, r ab.Rounds) ([]Rounds, error) {
	sides, spec, names, err := f.describe(ctx, r)
	if err != nil {
		return nil, err
	}
	whole, err := json.Marshal(struct {
		Sides  []Artifact
		Spec   Spec
		Rounds int
	}{sides, spec, r.Engine.Forks})
	if err != nil {
		return nil, err
	}
	id := hashOf(whole)[:24]
	jobTime := cmp.Or(f.JobTime, DefaultJobTime)
	// A round of a case is a fork of each side (both at once in a duet).
	one := engine.FirstRounds(spec.Engine, 1) * time.Duration(len(sides)) / 2
	chunks, per := cut(r.Engine.Forks, len(spec.Cases), one, jobTime)
	packed := pack(engine.Groups(r.Cases), per)
	var jobs []Rounds
	for _, ch := range chunks {
		for _, idx := range packed {
			js := spec
			js.Cases = nil
			var jobNames []string
			for _, i := range idx {
				js.Cases = append(js.Cases, spec.Cases[i])
				jobNames = append(jobNames, names[i])
			}
			data, err := json.Marshal(js)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, Rounds{Comparison: id, Class: f.Class, Sides: sides, Cases: jobNames, First: ch.first, Count: ch.count,
				Spec: data, Timeout: max(4*jobTime, MinJobTimeout)})
		}
	}
	return jobs, nil
}

// pack puts whole groups of cases (their indices) into jobs of up to per
// cases, in order: a group is never split (its cases are compared with
// each other, pairs by round, so they run on one machine), and a group
// larger than per is a job of its own.
func pack(groups [][]int, per int) [][]int {
	var jobs [][]int
	var job []int
	for _, g := range groups {
		if len(job) > 0 && len(job)+len(g) > per {
			jobs = append(jobs, job)
			job = nil
		}
		job = append(job, g...)
	}
	if len(job) > 0 {
		jobs = append(jobs, job)
	}
	return jobs
}

// chunk is rounds first to first+count-1.
type chunk struct{ first, count int }

// cut plans the jobs of rounds rounds of cases cases, a round of a case
// taking one: the rounds cut into as few chunks as fit in jobTime (each
// of at least MinJobRounds, all of them in one when there are fewer),
// and per cases a job: as few jobs as fit, of as even a size as can be.
func cut(rounds, cases int, one, jobTime time.Duration) ([]chunk, int) {
	rounds = max(rounds, 1)
	k := 1
	if whole := time.Duration(rounds) * one; whole > jobTime {
		k = min(int((whole+jobTime-1)/jobTime), max(rounds/MinJobRounds, 1))
	}
	var chunks []chunk
	for i, first := 0, 1; i < k; i++ {
		n := rounds / k
		if i < rounds%k {
			n++
		}
		chunks = append(chunks, chunk{first, n})
		first += n
	}
	cases = max(cases, 1)
	per := min(max(1, int(jobTime/(time.Duration(chunks[0].count)*one))), cases)
	jobs := (cases + per - 1) / per
	return chunks, (cases + jobs - 1) / jobs // as many jobs, evened out
}

// writeByAgent writes each agent's result files, in job order, to
// dir/<agent>.txt: one file a machine, a stratum of the comparison.
func writeByAgent(dir string, results []Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, session.FailedError{Msg: err.Error()}
	}
	var order []string
	by := map[string][]byte{}
	for _, r := range results {
		if _, ok := by[r.Agent]; !ok {
			order = append(order, r.Agent)
		}
		by[r.Agent] = append(by[r.Agent], r.File...)
	}
	var paths []string
	for _, a := range order {
		p := filepath.Join(dir, fileName(a)+".txt")
		if _, err := session.ReplaceFile(p, by[a]); err != nil {
			return nil, session.FailedError{Msg: err.Error()}
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// fileName is an agent's name made safe for a file name.
func fileName(agent string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, agent)
}

// present fails when no agent of the class has been seen for Absent
// while none of the comparison's jobs ran since moved.
func (f *Remote) present(ctx context.Context, moved time.Time) error {
	absent := cmp.Or(f.Absent, DefaultAbsent)
	if time.Since(moved) < absent {
		return nil
	}
	n, err := Seen(ctx, f.Pool, f.Class, absent)
	if err != nil || n > 0 {
		return err
	}
	return fmt.Errorf("no agent of class %s has been seen in the last %s: start one on a machine of that class (its jobs stay queued)", f.Class, absent)
}

// Schedule registers r, all the rounds of one program's cases, as the
// nightly of f's class: run every every, at at past each multiple of it
// (see Nightly), by an agent of the class. It returns when the next
// night is due.
func (f *Remote) Schedule(ctx context.Context, r ab.Rounds, every, at time.Duration) (time.Time, error) {
	if len(r.Sides) != 1 {
		return time.Time{}, session.Input("a nightly runs one program, not %d", len(r.Sides))
	}
	if err := checkSchedule(f.Class, every, at); err != nil {
		return time.Time{}, session.Input("%v", err) // before publishing anything
	}
	sides, spec, names, err := f.describe(ctx, r)
	if err != nil {
		return time.Time{}, err
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return time.Time{}, err
	}
	// A round of a case is a fork of the one program.
	jobTime := engine.FirstRounds(spec.Engine, len(names)) * time.Duration(max(r.Engine.Forks, 1)) / 2
	n := Nightly{Class: f.Class, Every: every, At: at, Job: Rounds{Class: f.Class, Sides: sides, Cases: names, First: 1,
		Count: r.Engine.Forks, Spec: data, Timeout: max(4*jobTime, MinJobTimeout)}}
	if err := n.check(); err != nil {
		return time.Time{}, session.Input("%v", err)
	}
	if err := RegisterNightly(ctx, f.Pool, n); err != nil {
		return time.Time{}, session.FailedError{Msg: err.Error()}
	}
	return n.Next(time.Now()), nil
}
