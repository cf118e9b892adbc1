package engine

import (
	"fmt"
	"os"
)

// LogCap bounds a fork's log file: a benchmark that floods its output
// (130 MB a second were seen) must not fill the disk and lose the run's
// results. The log keeps the first LogCap/2 bytes and the last LogCap/2.
const LogCap = 2 << 20

// cappedLog writes the head of a fork's output to its file as it comes
// and keeps the rest in a ring of the tail's size, written at Close after
// a line saying how much was left out. Writes never fail: a log that
// cannot be written is not a reason to fail the fork.
type cappedLog struct {
	f       *os.File
	head    int    // bytes of head still to write through
	tail    []byte // ring of the last bytes
	n       int    // bytes in the ring
	next    int    // next write position in the ring
	dropped int64  // bytes that left the ring
}

func (l *cappedLog) Write(b []byte) (int, error) {
	n := len(b)
	if l.head > 0 {
		k := min(l.head, len(b))
		l.f.Write(b[:k])
		l.head -= k
		b = b[k:]
	}
	for len(b) > 0 {
		k := copy(l.tail[l.next:], b)
		b = b[k:]
		l.next = (l.next + k) % len(l.tail)
		if l.n+k > len(l.tail) {
			l.dropped += int64(l.n + k - len(l.tail))
		}
		l.n = min(l.n+k, len(l.tail))
	}
	return n, nil
}

// Close writes the tail and closes the file.
func (l *cappedLog) Close() error {
	if l.dropped > 0 {
		fmt.Fprintf(l.f, "\n… %d bytes left out (the log keeps its first and last %d bytes) …\n", l.dropped, len(l.tail))
	}
	if l.n == len(l.tail) {
		l.f.Write(l.tail[l.next:])
	}
	l.f.Write(l.tail[:l.next])
	return l.f.Close()
}

// Name is the log file's path.
func (l *cappedLog) Name() string { return l.f.Name() }
