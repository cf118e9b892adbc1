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
//
// One client address (the IP, whatever its port) holds at most
// PerClient of the connections (no bound when 0): past it, its new
// connection takes the place of its own quietest, on the same terms, and
// never of another client's. A client that floods the server with
// connections it does not use takes no room from the others.
type ConnLimit struct {
	net.Listener
	Max       int
	PerClient int
	Quiet     time.Duration

	mu       sync.Mutex
	conns    map[*limitedConn]struct{}
	byClient map[string]int
	refused  atomic.Int64
	evicted  atomic.Int64
}

// DefaultQuiet is how long a connection must have been quiet before a new
// one may take its place.
const DefaultQuiet = time.Second

// LimitConns wraps ln in a ConnLimit of max connections, perClient of
// them from one address.
func LimitConns(ln net.Listener, max, perClient int, quiet time.Duration) *ConnLimit {
	return &ConnLimit{Listener: ln, Max: max, PerClient: perClient, Quiet: quiet,
		conns: map[*limitedConn]struct{}{}, byClient: map[string]int{}}
}

// Accept returns the next connection the limit admits.
func (l *ConnLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: l, client: clientOf(c.RemoteAddr())}
		lc.touch()
		if l.admit(lc) {
			return lc, nil
		}
		c.Close()
		l.refused.Add(1)
	}
}

// admit adds lc: in the place of its client's quietest connection at
// the client's limit, or of the quietest of all at the limit.
func (l *ConnLimit) admit(lc *limitedConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	full := len(l.conns) >= max(l.Max, 1)
	mine := l.PerClient > 0 && l.byClient[lc.client] >= l.PerClient
	if full || mine {
		var victim *limitedConn
		for c := range l.conns {
			if mine && c.client != lc.client {
				continue
			}
			if victim == nil || c.last.Load() < victim.last.Load() {
				victim = c
			}
		}
		if victim == nil || monotonic()-victim.last.Load() < int64(l.Quiet) {
			return false
		}
		l.drop(victim)
		victim.Conn.Close() // the server's own Close of it then only returns an error
		l.evicted.Add(1)
	}
	l.conns[lc] = struct{}{}
	l.byClient[lc.client]++
	return true
}

// drop forgets c; l.mu is held.
func (l *ConnLimit) drop(c *limitedConn) {
	if _, ok := l.conns[c]; !ok {
		return
	}
	delete(l.conns, c)
	if l.byClient[c.client]--; l.byClient[c.client] <= 0 {
		delete(l.byClient, c.client)
	}
}

// clientOf is the address a connection comes from, without its port.
func clientOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
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
	l.drop(c)
	l.mu.Unlock()
}

var epoch = time.Now()

func monotonic() int64 { return int64(time.Since(epoch)) }

// limitedConn is a connection of a ConnLimit, with the time it last moved
// bytes.
type limitedConn struct {
	net.Conn
	l      *ConnLimit
	client string       // clientOf its remote address
	last   atomic.Int64 // monotonic()
	once   sync.Once
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
