package eviction

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/ledgerbench/ledgerbench/impl/cache"
	"github.com/ledgerbench/ledgerbench/impl/cursor"
)

// Policy is the cache eviction setting a simulation runs under: the three
// runs of the rolling-restart test of PIP-430 (apache/pulsar#24623).
type Policy string

const (
	// ExpectedReads is PIP-430's default: entries expect a read per active
	// cursor that has still to read them, the removal queue requeues such
	// entries (up to MaxRequeue times) and entries accessed since they
	// were queued.
	ExpectedReads Policy = "expected-reads"
	// AccessedTTL is cacheEvictionByExpectedReadCount=false: expected reads
	// are ignored, recently accessed entries are still requeued.
	AccessedTTL Policy = "accessed-ttl"
	// TimeOnly also sets managedLedgerCacheEvictionExtendTTLOfRecentlyAccessed
	// =false: an entry leaves the cache TTL after it was inserted.
	TimeOnly Policy = "time-only"
)

// Policies are the policies in the seed's order.
var Policies = []string{string(ExpectedReads), string(AccessedTTL), string(TimeOnly)}

// ConsumerSpec is one consumer of the simulated topic: its own
// subscription, the entries per second it can take, and how far behind the
// producer it starts (a backlog it catches up from storage).
type ConsumerSpec struct {
	Rate    float64
	Backlog time.Duration
}

// SimConfig describes one simulated topic on a broker that is restarted
// during the run. Time is virtual: the simulation advances a clock by Tick
// and drives the cache's stamps and eviction with it, so a run is
// deterministic for a seed and takes far less than Duration.
type SimConfig struct {
	Impl   string // range cache: "skiplist" or "paged"
	Policy Policy
	Seed   uint64

	Duration  time.Duration // simulated run
	Tick      time.Duration // step; also the eviction interval (cacheEvictionIntervalMs, 10 ms)
	TTL       time.Duration // cacheEvictionTimeThresholdMillis (1 s)
	CacheSize int64         // bytes; eviction to the watermark above 98 % of it
	EntrySize int           // payload bytes per entry
	Rate      float64       // entries the producer publishes per second

	Consumers  []ConsumerSpec
	ReadBatch  int // entries per dispatcher read (dispatcherMaxReadBatchSize, 100)
	Permits    int // entries a consumer can have outstanding (receiver queue, 1000)
	MaxRequeue int // requeues of an entry with expected reads (5)

	Restarts int // broker restarts, evenly spaced in the run
	// After a restart every client reconnects after a delay drawn
	// uniformly from [ReconnectMin, ReconnectMax], and every consumer
	// resumes from its persisted mark-delete position, which trails what it
	// had read by up to MarkDeleteLag (the mark-delete rate limit).
	ReconnectMin, ReconnectMax time.Duration
	MarkDeleteLag              time.Duration
}

// SimResult is what a simulation measured. Hits are entries dispatched
// from the cache; every other dispatched entry was read from storage.
type SimResult struct {
	Produced, Delivered          int64
	StorageReads, StorageEntries int64
	Restarts                     int
}

// HitPercent is the share of dispatched entries served by the cache.
func (r SimResult) HitPercent() float64 {
	if r.Delivered == 0 {
		return 0
	}
	return 100 * float64(r.Delivered-r.StorageEntries) / float64(r.Delivered)
}

// PerThousand scales n to a rate per 1,000 dispatched messages.
func (r SimResult) PerThousand(n int64) float64 {
	if r.Delivered == 0 {
		return 0
	}
	return 1000 * float64(n) / float64(r.Delivered)
}

func (r SimResult) String() string {
	return fmt.Sprintf("produced %d, consumed %d, %d storage reads with %d entries, cache hits %.2f%%, %d restarts",
		r.Produced, r.Delivered, r.StorageReads, r.StorageEntries, r.HitPercent(), r.Restarts)
}

// RollingRestart is the seed's BrokerEntryCacheMultiBrokerTest
// testTailingReadsRollingRestart scaled to a simulation: one producer, ten
// consumers with their own subscriptions that keep up with it, 30 s, three
// restarts of the topic's broker.
func RollingRestart(impl string, policy Policy, seed uint64) SimConfig {
	c := baseConfig(impl, policy, seed)
	for i := range 10 {
		c.Consumers = append(c.Consumers, ConsumerSpec{Rate: (0.9 + 0.2*float64(i)/9) * c.Rate})
	}
	return c
}

// Mixed is RollingRestart with consumers at different speeds: five
// tailing, three slower than the producer (they fall behind by a few
// seconds over the run) and two starting 5 s behind, catching up from
// storage.
func Mixed(impl string, policy Policy, seed uint64) SimConfig {
	c := baseConfig(impl, policy, seed)
	for range 5 {
		c.Consumers = append(c.Consumers, ConsumerSpec{Rate: 4 * c.Rate})
	}
	for _, f := range []float64{0.95, 0.9, 0.85} {
		c.Consumers = append(c.Consumers, ConsumerSpec{Rate: f * c.Rate})
	}
	for range 2 {
		c.Consumers = append(c.Consumers, ConsumerSpec{Rate: 1.5 * c.Rate, Backlog: 5 * time.Second})
	}
	return c
}

func baseConfig(impl string, policy Policy, seed uint64) SimConfig {
	return SimConfig{
		Impl: impl, Policy: policy, Seed: seed,
		Duration: 30 * time.Second, Tick: 10 * time.Millisecond, TTL: time.Second,
		CacheSize: 16 << 20, EntrySize: 1024, Rate: 1000,
		ReadBatch: 100, Permits: 1000, MaxRequeue: 5,
		Restarts: 3, ReconnectMin: 100 * time.Millisecond, ReconnectMax: 2 * time.Second,
		MarkDeleteLag: time.Second,
	}
}

// Workloads are the named workloads of the HitRate benchmark.
var Workloads = map[string]func(impl string, policy Policy, seed uint64) SimConfig{
	"rolling": RollingRestart,
	"mixed":   Mixed,
}

func (c *SimConfig) validate() error {
	switch {
	case c.Impl != "skiplist" && c.Impl != "paged":
		return fmt.Errorf("unknown range cache %q (skiplist, paged)", c.Impl)
	case c.Policy != ExpectedReads && c.Policy != AccessedTTL && c.Policy != TimeOnly:
		return fmt.Errorf("unknown policy %q (%s, %s, %s)", c.Policy, ExpectedReads, AccessedTTL, TimeOnly)
	case c.Duration <= 0 || c.Tick <= 0 || c.TTL <= 0 || c.Rate <= 0 || c.EntrySize <= 0 || c.CacheSize <= 0:
		return errors.New("duration, tick, TTL, rate, entry size and cache size must be positive")
	case c.ReadBatch <= 0 || c.Permits < c.ReadBatch:
		return errors.New("read batch must be positive and at most the permits")
	case len(c.Consumers) == 0:
		return errors.New("no consumers")
	case c.ReconnectMax < c.ReconnectMin || c.ReconnectMin < 0 || c.MarkDeleteLag < 0:
		return errors.New("bad reconnect delays or mark-delete lag")
	}
	for i, s := range c.Consumers {
		if s.Rate <= 0 || s.Backlog < 0 {
			return fmt.Errorf("consumer %d: rate must be positive and backlog not negative", i)
		}
	}
	return nil
}

// simStorage is the bookies: it holds how many entries each ledger has
// (all of one size) and counts the reads the cache misses cause. Every
// entry it returns is counted live until it is deallocated.
type simStorage struct {
	ledgers []int64 // entries written per ledger
	payload []byte
	reads   int64
	entries int64
	live    *atomic.Int64
}

func (s *simStorage) ReadEntries(ledger, first, last int64) ([]*cache.Entry, error) {
	if ledger < 0 || ledger >= int64(len(s.ledgers)) || first < 0 || last >= s.ledgers[ledger] || first > last {
		return nil, fmt.Errorf("read of ledger %d [%d, %d] beyond what was written", ledger, first, last)
	}
	s.reads++
	s.entries += last - first + 1
	out := make([]*cache.Entry, 0, last-first+1)
	for i := first; i <= last; i++ {
		out = append(out, s.newEntry(ledger, i, 0))
	}
	return out, nil
}

func (s *simStorage) newEntry(ledger, id int64, expected int32) *cache.Entry {
	s.live.Add(1)
	return cache.NewEntry(ledger, id, s.payload, expected, func(*cache.Entry) { s.live.Add(-1) })
}

type mark struct {
	at  int64
	pos cursor.Position
}

type consumer struct {
	name      string
	spec      ConsumerSpec
	pos       cursor.Position // next entry to read
	connected bool
	reconnect int64   // virtual time of the reconnection
	budget    float64 // entries it can take now
	marks     []mark  // read positions of the last MarkDeleteLag
	persisted cursor.Position
}

// persist advances the persisted mark-delete position to the last read
// position at least lag old (the broker persists it at a limited rate).
func (c *consumer) persist(now, lag int64) {
	k := 0
	for k < len(c.marks) && c.marks[k].at <= now-lag {
		c.persisted = c.marks[k].pos
		k++
	}
	c.marks = append(c.marks[:0], c.marks[k:]...)
}

// broker is the topic's owner: a cache manager, the topic's entry cache
// and the active cursors. A restart replaces it.
type broker struct {
	m       *cache.Manager
	ec      *cache.EntryCache
	cursors cursor.Container
}

// sim is one simulation: the virtual clock, the storage, the broker that
// owns the topic (replaced at each restart), the producer and the
// consumers. Simulate makes one and runs it tick by tick.
type sim struct {
	cfg  SimConfig
	res  SimResult
	now  int64 // virtual time, ns
	live atomic.Int64
	st   *simStorage
	rng  *rand.Rand
	b    *broker
	cons []*consumer
	// producerBudget is the entries the producer may publish now;
	// producerBack is when it reconnects after a restart.
	producerBudget float64
	producerBack   int64
}

// Simulate runs one simulation. It fails if the cache loses track of an
// entry: every entry the producer and storage made must have been
// deallocated once the last broker's cache is cleared.
func Simulate(cfg SimConfig) (SimResult, error) {
	if err := cfg.validate(); err != nil {
		return SimResult{}, err
	}
	s := &sim{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed))}
	s.st = &simStorage{ledgers: []int64{0}, payload: make([]byte, cfg.EntrySize), live: &s.live}
	var err error
	if s.b, err = s.newBroker(); err != nil {
		return s.res, err
	}
	if err := s.connectConsumers(); err != nil {
		return s.res, err
	}
	if err := s.run(); err != nil {
		return s.res, err
	}
	s.b.ec.Clear()
	s.res.StorageReads, s.res.StorageEntries = s.st.reads, s.st.entries
	if n := s.live.Load(); n != 0 {
		return s.res, fmt.Errorf("%d entries were never deallocated after the cache was cleared", n)
	}
	return s.res, nil
}

// newBroker is a broker with an empty cache, its manager reading the
// simulation's clock.
func (s *sim) newBroker() (*broker, error) {
	cfg := s.cfg
	maxRequeue := 0 // eviction ignores expected reads
	if cfg.Policy == ExpectedReads {
		maxRequeue = cfg.MaxRequeue
	}
	m, err := cache.NewManager(cache.ManagerConfig{
		Impl: cfg.Impl, MaxSize: cfg.CacheSize,
		MaxRequeue:          maxRequeue,
		ExtendTTLOfAccessed: cfg.Policy != TimeOnly,
		Clock:               func() int64 { return s.now },
	})
	if err != nil {
		return nil, err
	}
	impl := "heap" // the legacy container tracks only the slowest cursor
	if cfg.Policy == ExpectedReads {
		impl = "active"
	}
	cs, err := cursor.New(impl)
	if err != nil {
		return nil, err
	}
	return &broker{m: m, ec: m.NewEntryCache(s.st), cursors: cs}, nil
}

// connectConsumers writes the backlog of the slowest starter before the
// run, straight to storage (it is not in the new broker's cache), and
// places each consumer its own backlog behind the end.
func (s *sim) connectConsumers() error {
	var maxBacklog time.Duration
	for _, c := range s.cfg.Consumers {
		maxBacklog = max(maxBacklog, c.Backlog)
	}
	prefill := int64(s.cfg.Rate * maxBacklog.Seconds())
	s.st.ledgers[0] = prefill
	s.cons = make([]*consumer, len(s.cfg.Consumers))
	for i, spec := range s.cfg.Consumers {
		start := prefill - int64(s.cfg.Rate*spec.Backlog.Seconds())
		pos := cursor.Position{Ledger: 0, Entry: start}
		s.cons[i] = &consumer{name: fmt.Sprintf("sub-%d", i), spec: spec, pos: pos, persisted: pos, connected: true}
		if err := s.b.cursors.Add(s.cons[i].name, pos); err != nil {
			return err
		}
	}
	return nil
}

// run advances the clock tick by tick to the end: restarts at their
// times, the producer's publishing, eviction, and the consumers in a
// shuffled order each tick.
func (s *sim) run() error {
	cfg := s.cfg
	nextRestart := 1
	order := make([]int, len(s.cons))
	for i := range order {
		order[i] = i
	}
	for s.now = 0; s.now < int64(cfg.Duration); s.now += int64(cfg.Tick) {
		if nextRestart <= cfg.Restarts && s.now >= int64(cfg.Duration)*int64(nextRestart)/int64(cfg.Restarts+1) {
			if err := s.restart(); err != nil {
				return err
			}
			nextRestart++
		}
		if err := s.produce(); err != nil {
			return err
		}
		s.b.m.EvictOlderThan(cfg.TTL)
		s.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			if err := s.consume(s.cons[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// reconnectDelay is a random delay between the configured bounds.
func (s *sim) reconnectDelay() int64 {
	return int64(s.cfg.ReconnectMin) + s.rng.Int64N(int64(s.cfg.ReconnectMax-s.cfg.ReconnectMin)+1)
}

// produce publishes what the producer's rate allows this tick, once it
// is connected.
func (s *sim) produce() error {
	if s.now < s.producerBack {
		return nil
	}
	s.producerBudget += s.cfg.Rate * s.cfg.Tick.Seconds()
	for ; s.producerBudget >= 1; s.producerBudget-- {
		if err := s.publish(); err != nil {
			return err
		}
	}
	return nil
}

// publish writes one entry to the current ledger and, while some cursor
// is active, inserts it into the cache with its expected reads.
func (s *sim) publish() error {
	st := s.st
	l := int64(len(st.ledgers) - 1)
	id := st.ledgers[l]
	st.ledgers[l]++
	s.res.Produced++
	active := s.b.cursors.Size()
	if active == 0 {
		return nil
	}
	expected := int32(0)
	if s.cfg.Policy == ExpectedReads {
		expected = int32(active)
	}
	e := st.newEntry(l, id, expected)
	e.SetDecreaseReadCountOnRelease(false)
	_, err := s.b.ec.Insert(e)
	e.Release()
	return err
}

// consume reconnects c when its time has come, dispatches to it and
// persists its mark-delete position.
func (s *sim) consume(c *consumer) error {
	if !c.connected {
		if s.now < c.reconnect {
			return nil
		}
		c.connected = true
		if err := s.b.cursors.Add(c.name, c.pos); err != nil {
			return err
		}
	}
	if err := s.dispatch(c); err != nil {
		return err
	}
	c.persist(s.now, int64(s.cfg.MarkDeleteLag))
	return nil
}

// dispatch reads c's next entries through the cache, as far as its
// permits and the written entries allow, and acknowledges them.
func (s *sim) dispatch(c *consumer) error {
	cfg, st := s.cfg, s.st
	c.budget = min(c.budget+c.spec.Rate*cfg.Tick.Seconds(), float64(cfg.Permits))
	for {
		written := st.ledgers[c.pos.Ledger]
		if c.pos.Entry >= written {
			if c.pos.Ledger == int64(len(st.ledgers)-1) {
				return nil // caught up with the producer
			}
			c.pos = cursor.Position{Ledger: c.pos.Ledger + 1}
			continue
		}
		n := min(int64(cfg.ReadBatch), written-c.pos.Entry, int64(c.budget))
		if n < 1 {
			return nil
		}
		expected := int32(1) // cached; the queue ignores it (MaxRequeue 0)
		if cfg.Policy == ExpectedReads {
			k, _ := s.b.cursors.CountAtOrBefore(c.name)
			expected = int32(k)
		}
		es, err := s.b.ec.ReadEntries(c.pos.Ledger, c.pos.Entry, c.pos.Entry+n-1, expected)
		if err != nil {
			return err
		}
		for _, e := range es {
			e.Release() // dispatched and acknowledged: one expected read done
		}
		s.res.Delivered += n
		c.budget -= float64(n)
		c.pos = c.pos.After(n)
		if err := s.b.cursors.Update(c.name, c.pos); err != nil {
			return err
		}
		c.marks = append(c.marks, mark{s.now, c.pos})
	}
}

// restart replaces the broker: its cache goes with it, the new owner
// opens a new ledger, the consumers fall back to their persisted
// positions and reconnect after a delay, and so does the producer.
func (s *sim) restart() error {
	s.b.ec.Clear()
	nb, err := s.newBroker()
	if err != nil {
		return err
	}
	s.b = nb
	s.st.ledgers = append(s.st.ledgers, 0)
	for _, c := range s.cons {
		c.persist(s.now, int64(s.cfg.MarkDeleteLag))
		c.pos = c.persisted // unacknowledged entries are dispatched again
		c.marks = c.marks[:0]
		c.connected, c.budget = false, 0
		c.reconnect = s.now + s.reconnectDelay()
	}
	s.res.Restarts++
	s.producerBack = s.now + s.reconnectDelay()
	s.producerBudget = 0
	return nil
}
