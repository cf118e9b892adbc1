package dedup

import "sync"

// Locked is the topic-wide lock: one mutex serializes every admission of
// the topic, whatever the producer (Pulsar's synchronized block before
// #26763).
type Locked struct {
	mu     sync.Mutex
	pushed map[string]int64
}

// NewLocked returns an empty Locked admission map.
func NewLocked() *Locked { return &Locked{pushed: map[string]int64{}} }

func (l *Locked) Admit(name string, seq, highest int64) (bool, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.pushed[name]; ok && seq <= p {
		return false, p
	}
	l.pushed[name] = highest
	return true, 0
}

func (l *Locked) Pushed(name string) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.pushed[name]
	return p, ok
}

func (l *Locked) Set(name string, seq int64) {
	l.mu.Lock()
	l.pushed[name] = seq
	l.mu.Unlock()
}

func (l *Locked) Delete(name string) {
	l.mu.Lock()
	delete(l.pushed, name)
	l.mu.Unlock()
}

func (l *Locked) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pushed)
}

func (l *Locked) Range(fn func(string, int64) bool) {
	l.mu.Lock()
	snap := make(map[string]int64, len(l.pushed))
	for k, v := range l.pushed {
		snap[k] = v
	}
	l.mu.Unlock()
	for k, v := range snap {
		if !fn(k, v) {
			return
		}
	}
}
