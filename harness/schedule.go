package harness

import "time"

// Schedule is when the iterations of a fork in lockstep start (a duet:
// two forks of one case, one per side, run at the same time): the first
// at Start, each later one when the iterations before it have had their
// time and a Gap each (for the iteration's setup, its GC and an overrun
// of the last batch). Both forks of a pair get the same schedule and the
// same plan, so their measured windows open together and, lasting the
// same time, close together. Iterations of a fixed op count have no
// length to schedule: from the first such iteration on, each starts when
// the one before it ends.
type Schedule struct {
	StartUnixNano int64 `json:"start"`
	GapNs         int64 `json:"gap"`
}

// At is the start of iteration j of p (its warmup iterations first,
// from 0), or the zero time when it is not scheduled.
func (s Schedule) At(p *Plan, j int) time.Time {
	at := s.StartUnixNano
	for _, spec := range []struct {
		n int
		d time.Duration
	}{{p.Warmup.Count, p.Warmup.Time}, {p.Measure.Count, p.Measure.Time}} {
		for range spec.n {
			if j == 0 {
				return time.Unix(0, at)
			}
			if spec.d <= 0 {
				return time.Time{}
			}
			at += int64(spec.d) + s.GapNs
			j--
		}
	}
	return time.Time{}
}

// waitUntil sleeps until at, unless at is zero or past.
func waitUntil(at time.Time) {
	if !at.IsZero() {
		time.Sleep(time.Until(at))
	}
}
