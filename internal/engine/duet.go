package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// A duet runs the two sides of an A/B run at the same time: in each round
// a case's baseline fork and its experiment fork start together, each
// pinned to its own half of the CPUs (the halves swap every round, so a
// faster core favours neither side), and a fork of a registered
// benchmark keeps a common schedule, so both sides' measured iterations
// open and close together and what the host does in that time (a
// neighbour's burst, a frequency change) hits both. The pair's ratio
// cancels it. What the two forks share and do not split (the last-level
// cache, memory bandwidth, the kernel) is the duet's assumption: an A/A
// duet measures what it costs. A go test benchmark's forks start together
// and run the same benchtime; their iterations keep no schedule.

// duetLead is how far ahead of the second fork's readiness a duet's
// schedule starts: time for both go frames to arrive.
const duetLead = 20 * time.Millisecond

// DuetGap is the time a duet's schedule leaves between iterations, on top
// of their length, for the next one's setup and GC: a tenth of the
// iteration time, at least 20 ms.
func DuetGap(o Options) time.Duration {
	return max(20*time.Millisecond, max(o.Warmup.Time, o.Measure.Time)/10)
}

// DuetCPUs splits cpus (when empty, the CPUs this process may run on)
// into two halves of equal size, one per side of a duet; an odd CPU out
// is left idle, so both sides have the same GOMAXPROCS. Fewer than two
// CPUs cannot hold a duet.
func DuetCPUs(cpus []int) ([2][]int, error) {
	if len(cpus) == 0 {
		cpus = affinity()
	}
	if len(cpus) < 2 {
		return [2][]int{}, fmt.Errorf("a duet runs both sides at once on CPUs of their own: it needs at least 2 CPUs, and has %d (%v)", len(cpus), cpus)
	}
	h := len(cpus) / 2
	return [2][]int{append([]int(nil), cpus[:h]...), append([]int(nil), cpus[h:2*h]...)}, nil
}

// duetPair is the meeting point of a duet's two forks: each arrives when
// its child is set up, and both leave with the same schedule. A fork that
// ends (or fails) before it arrives leaves, so the other never waits for
// it.
type duetPair struct {
	gap     time.Duration
	mu      sync.Mutex
	arrived int
	ready   chan struct{} // closed when both arrived, or one left
	closed  bool
	sched   harness.Schedule
}

func newDuetPair(gap time.Duration) *duetPair {
	return &duetPair{gap: gap, ready: make(chan struct{})}
}

// release sets the schedule and lets every waiter go (mu held).
func (d *duetPair) release() {
	if !d.closed {
		d.closed = true
		d.sched = harness.Schedule{StartUnixNano: time.Now().Add(duetLead).UnixNano(), GapNs: int64(d.gap)}
		close(d.ready)
	}
}

// arrive waits for the other fork (or its end) and returns the schedule.
func (d *duetPair) arrive(ctx context.Context) (harness.Schedule, error) {
	d.mu.Lock()
	d.arrived++
	if d.arrived == 2 {
		d.release()
	}
	d.mu.Unlock()
	select {
	case <-d.ready:
	case <-ctx.Done():
		return harness.Schedule{}, ctx.Err()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sched, nil
}

// leave is called when a fork ends: the other no longer waits for it.
func (d *duetPair) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.release()
}

// checkDuet refuses a duet that cannot pair.
func (rn *Runner) checkDuet(o Options, sides []Side) error {
	switch {
	case len(sides) != 2:
		return fmt.Errorf("a duet runs two sides at once, not %d", len(sides))
	case o.Forks == 0:
		return errors.New("a duet runs forks: Forks 0 runs in this process")
	}
	_, err := DuetCPUs(rn.CPUs)
	return err
}

// duetFork runs fork round of case i on both sides at once, each on its
// half of the CPUs, swapped every round.
func (rn *Runner) duetFork(ctx context.Context, o Options, sides []*Runner, launch []Launcher, runs []*result.Run, cs []Case, i, round int, ev Event) {
	halves, _ := DuetCPUs(rn.CPUs) // checked by checkDuet
	if round%2 == 0 {
		halves[0], halves[1] = halves[1], halves[0]
	}
	var names []string
	for s, srn := range sides {
		names = append(names, fmt.Sprintf("%s@%s", srn.side, cpuList(halves[s])))
	}
	runs[0].Order = append(runs[0].Order, fmt.Sprintf("%d:%s:%s", round, cs[0].Name(), strings.Join(names, "+")))
	var note string
	if rn.BeforeFork != nil {
		note = rn.BeforeFork(cs[0], round)
	}
	pair := newDuetPair(DuetGap(o))
	evs := make([]Event, len(sides))
	errs := make([]*result.ForkError, len(sides))
	var wg sync.WaitGroup
	for s, srn := range sides {
		evs[s] = ev
		evs[s].Case, evs[s].Done, evs[s].Side = cs[s], ev.Done+s, srn.side
		rn.progress(evs[s])
		r := *srn
		r.CPUs, r.pair = halves[s], pair
		cr := runs[s].Cases[i]
		if note != "" {
			cr.Notes = append(cr.Notes, fmt.Sprintf("fork %d: %s", round, note))
		}
		wg.Go(func() {
			defer pair.leave()
			errs[s] = launch[s].fork(ctx, &r, o, cs[s], round, cr)
		})
	}
	wg.Wait()
	for s := range sides {
		rn.ended(runs[s].Cases[i], evs[s], errs[s])
	}
}

func cpuList(cpus []int) string {
	var b strings.Builder
	for i, c := range cpus {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, c)
	}
	return b.String()
}
