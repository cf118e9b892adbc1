package dedup

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Config configures a Deduplicator. The zero value works: no snapshots, no
// purge, no bound on producers, the default replicator prefix.
type Config struct {
	// SnapshotInterval is the number of persisted messages between two
	// snapshots (0: no snapshots).
	SnapshotInterval int
	Store            SnapshotStore
	// InactiveTimeout is how long a disconnected producer is remembered
	// before PurgeInactive forgets it (0: forever).
	InactiveTimeout time.Duration
	// MaxProducers bounds the producers tracked: when a producer connects
	// beyond it, the longest-disconnected producers are forgotten first
	// (0: no bound). Connected producers are never forgotten.
	MaxProducers     int
	ReplicatorPrefix string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Deduplicator deduplicates the messages of one topic.
type Deduplicator struct {
	cfg    Config
	pushed Admission

	// persisted is read lock-free on every rejected message (Java keeps it
	// in a ConcurrentHashMap); it only moves forward, which Admit does.
	persisted *Atomic

	mu        sync.Mutex // guards counter, inactive, snapshots
	counter   int
	inactive  map[string]time.Time // disconnected producers → since
	snapshots int                  // snapshots taken

	replMu         sync.Mutex // the v2 pair must be checked and updated as one
	replPushed     map[string]Position
	replPersisted  map[string]Position
	lastSnapshotAt Position
}

// New returns a Deduplicator admitting through a.
func New(a Admission, cfg Config) *Deduplicator {
	if cfg.ReplicatorPrefix == "" {
		cfg.ReplicatorPrefix = DefaultReplicatorPrefix
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Deduplicator{
		cfg: cfg, pushed: a,
		persisted: NewAtomic(), inactive: map[string]time.Time{},
		replPushed: map[string]Position{}, replPersisted: map[string]Position{},
		lastSnapshotAt: NoPosition,
	}
}

// Admission returns the pushed-sequence map.
func (d *Deduplicator) Admission() Admission { return d.pushed }

// IsDuplicate decides whether m is new (NotDup, and then it is pushed),
// already persisted (Dup) or pushed but not yet persisted (Unknown). A
// malformed message is an error wrapping ErrInvalid and changes nothing.
func (d *Deduplicator) IsDuplicate(m *Message) (Status, error) {
	if err := m.validate(d.cfg.ReplicatorPrefix); err != nil {
		return Unknown, err
	}
	if m.Marker {
		return NotDup, nil
	}
	if m.replicated(d.cfg.ReplicatorPrefix) && m.ReplByPosition {
		return d.isDuplicateReplV2(m), nil
	}
	if !m.lastChunk() {
		return NotDup, nil // only the last chunk of a message is checked
	}
	name, seq, highest := m.key(d.cfg.ReplicatorPrefix)
	if ok, _ := d.pushed.Admit(name, seq, highest); ok {
		return NotDup, nil
	}
	if persisted, ok := d.persisted.Pushed(name); ok && seq <= persisted {
		return Dup, nil
	}
	return Unknown, nil
}

func (d *Deduplicator) isDuplicateReplV2(m *Message) Status {
	d.replMu.Lock()
	defer d.replMu.Unlock()
	pos := m.ReplPosition
	if last, ok := d.replPushed[m.ProducerName]; ok && !last.Before(pos) {
		if lp, ok := d.replPersisted[m.ProducerName]; ok && !lp.Before(pos) {
			return Dup
		}
		return Unknown
	}
	d.replPushed[m.ProducerName] = pos
	return NotDup
}

// RecordPersisted records that the store acknowledged m at position at:
// the producer's persisted sequence becomes the highest of m (only for the
// last chunk of a chunked message), and every SnapshotInterval persisted
// messages a snapshot is taken. A snapshot failure is returned; the
// persisted state is updated anyway.
func (d *Deduplicator) RecordPersisted(m *Message, at Position) error {
	if err := m.validate(d.cfg.ReplicatorPrefix); err != nil {
		return err
	}
	if m.Marker {
		return nil
	}
	if m.replicated(d.cfg.ReplicatorPrefix) && m.ReplByPosition {
		d.replMu.Lock()
		if lp, ok := d.replPersisted[m.ProducerName]; !ok || lp.Before(m.ReplPosition) {
			d.replPersisted[m.ProducerName] = m.ReplPosition
		}
		d.replMu.Unlock()
	} else if m.lastChunk() {
		name, _, highest := m.key(d.cfg.ReplicatorPrefix)
		d.persisted.Admit(name, highest, highest) // moves forward only
	}
	d.mu.Lock()
	d.counter++
	due := d.cfg.SnapshotInterval > 0 && d.cfg.Store != nil && d.counter >= d.cfg.SnapshotInterval
	if due {
		d.counter = 0
	}
	d.mu.Unlock()
	if due {
		return d.TakeSnapshot(at)
	}
	return nil
}

// Persisted returns name's persisted sequence.
func (d *Deduplicator) Persisted(name string) (int64, bool) { return d.persisted.Pushed(name) }

// TakeSnapshot saves the persisted state, as of position at, to the store.
func (d *Deduplicator) TakeSnapshot(at Position) error {
	if d.cfg.Store == nil {
		return errors.New("dedup: no snapshot store configured")
	}
	s := &Snapshot{Position: at, Sequences: map[string]int64{}, ReplPositions: map[string]Position{}}
	d.persisted.Range(func(k string, v int64) bool { s.Sequences[k] = v; return true })
	d.replMu.Lock()
	for k, v := range d.replPersisted {
		s.ReplPositions[k] = v
	}
	d.replMu.Unlock()
	if err := d.cfg.Store.Save(s); err != nil {
		return fmt.Errorf("dedup: snapshot at %v: %w", at, err)
	}
	d.mu.Lock()
	d.snapshots++
	d.lastSnapshotAt = at
	d.mu.Unlock()
	return nil
}

// ProducerConnected marks name active. When MaxProducers is exceeded, the
// longest-disconnected producers are forgotten first.
func (d *Deduplicator) ProducerConnected(name string) {
	d.mu.Lock()
	delete(d.inactive, name)
	var evict []string
	if limit := d.cfg.MaxProducers; limit > 0 {
		over := d.trackedLocked(name) - limit
		if over > 0 {
			evict = d.oldestInactiveLocked(over)
		}
	}
	d.mu.Unlock()
	for _, n := range evict {
		d.forget(n)
	}
}

// trackedLocked counts the producers known to either map, name included.
func (d *Deduplicator) trackedLocked(name string) int {
	names := map[string]bool{name: true}
	d.persisted.Range(func(k string, _ int64) bool { names[k] = true; return true })
	d.pushed.Range(func(k string, _ int64) bool { names[k] = true; return true })
	return len(names)
}

func (d *Deduplicator) oldestInactiveLocked(n int) []string {
	type since struct {
		name string
		at   time.Time
	}
	var all []since
	for k, t := range d.inactive {
		all = append(all, since{k, t})
	}
	sort.Slice(all, func(i, j int) bool {
		return all[i].at.Before(all[j].at) || (all[i].at.Equal(all[j].at) && all[i].name < all[j].name)
	})
	var out []string
	for i := 0; i < n && i < len(all); i++ {
		out = append(out, all[i].name)
	}
	return out
}

// ProducerDisconnected starts name's inactivity clock.
func (d *Deduplicator) ProducerDisconnected(name string) {
	d.mu.Lock()
	d.inactive[name] = d.cfg.Now()
	d.mu.Unlock()
}

// PurgeInactive forgets producers disconnected for longer than
// InactiveTimeout and returns their names.
func (d *Deduplicator) PurgeInactive() []string {
	if d.cfg.InactiveTimeout <= 0 {
		return nil
	}
	now := d.cfg.Now()
	d.mu.Lock()
	var purge []string
	for k, t := range d.inactive {
		if now.Sub(t) > d.cfg.InactiveTimeout {
			purge = append(purge, k)
		}
	}
	d.mu.Unlock()
	sort.Strings(purge)
	for _, n := range purge {
		d.forget(n)
	}
	return purge
}

func (d *Deduplicator) forget(name string) {
	d.pushed.Delete(name)
	d.persisted.Delete(name)
	d.mu.Lock()
	delete(d.inactive, name)
	d.mu.Unlock()
	d.replMu.Lock()
	delete(d.replPushed, name)
	delete(d.replPersisted, name)
	d.replMu.Unlock()
}
