package server

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ConnLimit is a listener that keeps at most Max connections open, so a
// client that opens thousands of connections and sends nothing cannot
// take the descriptors the server needs for everyone else and for its
// store. At the limit, a new connection takes the place of the open one
// that has been quiet (nothing read or written) the longest, if it has
// been quiet for at least Quiet; otherwise the new connection is closed
// at once. Every connection is accepted, none waits unseen in the kernel's
// backlog behind stalled ones, and one that moves bytes is never the
// first to go.
type ConnLimit struct {
	net.Listener
	Max   int
	Quiet time.Duration

	mu      sync.Mutex
	conns   map[*limitedConn]struct{}
	refused atomic.Int64
	evicted atomic.Int64
}

// DefaultQuiet is how long a connection must have been quiet before a new
// one may take its place.
const DefaultQuiet = time.Second

// LimitConns wraps ln in a ConnLimit of max connections.
func LimitConns(ln net.Listener, max int, quiet time.Duration) *ConnLimit {
	return &ConnLimit{Listener: ln, Max: max, Quiet: quiet, conns: map[*limitedConn]struct{}{}}
}

// Accept returns the next connection the limit admits.
func (l *ConnLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: l}
		lc.touch()
		if l.admit(lc) {
			return lc, nil
		}
		c.Close()
		l.refused.Add(1)
	}
}

// admit adds lc, in the place of the quietest connection at the limit.
func (l *ConnLimit) admit(lc *limitedConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= max(l.Max, 1) {
		var victim *limitedConn
		for c := range l.conns {
			if victim == nil || c.last.Load() < victim.last.Load() {
				victim = c
			}
		}
		if monotonic()-victim.last.Load() < int64(l.Quiet) {
			return false
		}
		delete(l.conns, victim)
		victim.Conn.Close() // the server's own Close of it then only returns an error
		l.evicted.Add(1)
	}
	l.conns[lc] = struct{}{}
	return true
}

// Open is the number of connections open now.
func (l *ConnLimit) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Refused and Evicted count the connections closed at once at the limit,
// and those closed to make room.
func (l *ConnLimit) Refused() int64 { return l.refused.Load() }
func (l *ConnLimit) Evicted() int64 { return l.evicted.Load() }

func (l *ConnLimit) remove(c *limitedConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

var epoch = time.Now()

func monotonic() int64 { return int64(time.Since(epoch)) }

// limitedConn is a connection of a ConnLimit, with the time it last moved
// bytes.
type limitedConn struct {
	net.Conn
	l    *ConnLimit
	last atomic.Int64 // monotonic()
	once sync.Once
}

func (c *limitedConn) touch() { c.last.Store(monotonic()) }

func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (c *limitedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.remove(c) })
	return c.Conn.Close()
}
