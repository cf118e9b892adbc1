package dedup

import (
	"errors"
	"fmt"
	"maps"
)

// Entry is one message stored in the topic's log, as recovery replays it.
type Entry struct {
	Position Position
	Message  Message
}

// Log is the topic's log as far as recovery needs it.
type Log interface {
	// Replay calls fn for every entry after the given position, in order.
	Replay(after Position, fn func(Entry) error) error
}

// Recovery reports what Recover did.
type Recovery struct {
	// From is the snapshot position replay started after (NoPosition for a
	// rebuild from the start of the log).
	From     Position
	Replayed int
	// Skipped lists snapshots that could not be used (corrupt or
	// unreadable) and were passed over.
	Skipped []error
}

// Recover rebuilds the persisted and pushed state from the newest usable
// snapshot plus the log entries written after it. A corrupt snapshot is
// reported in Recovery.Skipped, never loaded; without a usable snapshot the
// whole log is replayed. Recover must run before the topic takes messages.
func (d *Deduplicator) Recover(log Log) (Recovery, error) {
	rec := Recovery{From: NoPosition}
	snap := &Snapshot{Sequences: map[string]int64{}, ReplPositions: map[string]Position{}, Position: NoPosition}
	if d.cfg.Store != nil {
		s, skipped, err := d.cfg.Store.Load()
		rec.Skipped = skipped
		switch {
		case err == nil:
			snap = s
		case !errors.Is(err, ErrNoSnapshot):
			return rec, err
		}
	}
	rec.From = snap.Position
	// Copies: replay adds to them, and a store's snapshot (whose maps may
	// be nil) stays as it was loaded.
	persisted := maps.Clone(snap.Sequences)
	if persisted == nil {
		persisted = map[string]int64{}
	}
	replPersisted := maps.Clone(snap.ReplPositions)
	if replPersisted == nil {
		replPersisted = map[string]Position{}
	}
	err := log.Replay(snap.Position, func(e Entry) error {
		m := &e.Message
		if err := m.validate(d.cfg.ReplicatorPrefix); err != nil {
			return fmt.Errorf("entry %v: %w", e.Position, err)
		}
		rec.Replayed++
		switch {
		case m.Marker:
		case m.replicated(d.cfg.ReplicatorPrefix) && m.ReplByPosition:
			if lp, ok := replPersisted[m.ProducerName]; !ok || lp.Before(m.ReplPosition) {
				replPersisted[m.ProducerName] = m.ReplPosition
			}
		case m.lastChunk():
			name, _, highest := m.key(d.cfg.ReplicatorPrefix)
			if p, ok := persisted[name]; !ok || p < highest {
				persisted[name] = highest
			}
		}
		return nil
	})
	if err != nil {
		return rec, fmt.Errorf("dedup: replay after %v: %w", snap.Position, err)
	}
	d.mu.Lock()
	d.counter = 0
	d.mu.Unlock()
	for name, seq := range persisted {
		d.persisted.Set(name, seq)
		d.pushed.Set(name, seq)
	}
	d.replMu.Lock()
	d.replPersisted = replPersisted
	d.replPushed = make(map[string]Position, len(replPersisted))
	for k, v := range replPersisted {
		d.replPushed[k] = v
	}
	d.replMu.Unlock()
	return rec, nil
}

// MemLog is an in-memory Log (tests and benchmarks).
type MemLog struct{ Entries []Entry }

// Append adds an entry at the next position of ledger 1.
func (l *MemLog) Append(m Message) Position {
	p := Position{1, int64(len(l.Entries))}
	l.Entries = append(l.Entries, Entry{Position: p, Message: m})
	return p
}

func (l *MemLog) Replay(after Position, fn func(Entry) error) error {
	for _, e := range l.Entries {
		if !after.Before(e.Position) {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
