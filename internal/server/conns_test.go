package server

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// dialFrom opens a connection to addr from the loopback address from
// (127.0.0.0/8 is all loopback on Linux), so that one test plays several
// clients.
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// served reports whether the listener kept c open: it answers a byte
// written to it with the byte.
func served(c net.Conn) bool {
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte{1}); err != nil {
		return false
	}
	var b [1]byte
	_, err := io.ReadFull(c, b[:])
	return err == nil
}

// echo accepts from l and echoes each connection until it closes.
func echo(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() { io.Copy(c, c); c.Close() }()
	}
}

// TestOneClientsFloodTakesNoRoomFromOthers: 100 connections opened at
// once from one address, none quiet for long, hold at most PerClient
// places; a client at another address still gets in and is served, and
// the flood's own connections are the ones refused. Without the bound,
// the flood filled all 32 places and every other client was refused.
func TestOneClientsFloodTakesNoRoomFromOthers(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := LimitConns(raw, 32, 8, time.Minute)
	defer l.Close()
	go echo(l)
	addr := raw.Addr().String()
	var flood []net.Conn
	for range 100 {
		flood = append(flood, dialFrom(t, "127.0.0.2", addr))
	}
	kept := 0
	for _, c := range flood {
		if served(c) {
			kept++
		}
	}
	if kept != 8 {
		t.Errorf("the flooding client kept %d connections, want 8 (its limit)", kept)
	}
	for i, from := range []string{"127.0.0.3", "127.0.0.4", "127.0.0.3"} {
		if c := dialFrom(t, from, addr); !served(c) {
			t.Errorf("client %d (%s) beside the flood: refused", i, from)
		}
	}
	if l.Refused() != 92 || l.Evicted() != 0 || l.Open() != 11 {
		t.Errorf("refused %d, evicted %d, open %d: want 92, 0, 11", l.Refused(), l.Evicted(), l.Open())
	}
}

// TestAClientAtItsLimitReplacesItsOwnQuietest: past its limit, a
// client's new connection takes the place of its own quietest one once
// that has been quiet for Quiet, never of another client's quieter one;
// and a closed connection gives its place back to its client.
func TestAClientAtItsLimitReplacesItsOwnQuietest(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := LimitConns(raw, 10, 2, 200*time.Millisecond)
	defer l.Close()
	go echo(l)
	addr := raw.Addr().String()
	other := dialFrom(t, "127.0.0.3", addr) // the quietest of all
	if !served(other) {
		t.Fatal("the other client was refused")
	}
	time.Sleep(50 * time.Millisecond)
	a1, a2 := dialFrom(t, "127.0.0.2", addr), dialFrom(t, "127.0.0.2", addr)
	if !served(a1) || !served(a2) {
		t.Fatal("the client's first two connections were refused")
	}
	time.Sleep(300 * time.Millisecond)
	served(a2) // a1 is now the client's quietest
	a3 := dialFrom(t, "127.0.0.2", addr)
	if !served(a3) {
		t.Fatal("the client's third connection was refused though its first was quiet")
	}
	var ne net.Error
	a1.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := a1.Read(make([]byte, 1)); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("the client's quietest connection was not closed: %v", err)
	}
	if !served(other) || !served(a2) {
		t.Error("a connection other than the client's quietest was closed")
	}
	a4 := dialFrom(t, "127.0.0.2", addr) // a2 and a3 just moved bytes
	if served(a4) {
		t.Error("a fourth connection got in while the client's two were busy")
	}
	a3.Close()
	time.Sleep(50 * time.Millisecond)
	if a5 := dialFrom(t, "127.0.0.2", addr); !served(a5) {
		t.Error("a closed connection did not give its place back")
	}
	if l.Evicted() != 1 || l.Refused() != 1 {
		t.Errorf("evicted %d, refused %d: want 1 and 1", l.Evicted(), l.Refused())
	}
}
