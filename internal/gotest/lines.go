package gotest

import (
	"bytes"
	"strings"
	"sync"
	"time"
)

// splitter cuts a process's output into lines as it arrives: each line,
// without its newline or a trailing \r and clipped at max bytes (the rest
// of a longer line is dropped), goes to line. Close ends a last line that
// had no newline. It is the one line splitter of a test binary's output:
// the listing's (keptLines) and a measured run's (lineQueue).
type splitter struct {
	max     int
	partial []byte
	line    func(text string)
}

func (s *splitter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if room := s.max - len(s.partial); room > 0 {
			s.partial = append(s.partial, part[:min(len(part), room)]...)
		}
		if i < 0 {
			break
		}
		s.end()
		p = p[i+1:]
	}
	return n, nil
}

// end hands the line so far to line.
func (s *splitter) end() {
	l := strings.TrimRight(string(s.partial), "\r")
	s.partial = s.partial[:0]
	s.line(l)
}

// Close ends the last line, when it had no newline.
func (s *splitter) Close() {
	if len(s.partial) > 0 {
		s.end()
	}
}

// maxKeptLine and maxKept bound what keptLines holds: a line is clipped
// at maxKeptLine bytes, and lines beyond maxKept bytes in all are dropped.
const (
	maxKeptLine = 4 << 10
	maxKept     = 16 << 20
)

// keptLines is the stdout of a listing run, as far as the listing reads
// it: benchmark names and result lines, go test's --- lines, and the
// indented log lines of a skip. Every other line (a TestMain's own
// output, however long) is dropped as it arrives, so what a test binary
// prints costs bounded memory. The zero value is ready.
type keptLines struct {
	split     splitter
	out       bytes.Buffer
	truncated bool // lines were dropped at maxKept
}

func (k *keptLines) Write(p []byte) (int, error) {
	if k.split.line == nil {
		k.split = splitter{max: maxKeptLine, line: k.keep}
	}
	return k.split.Write(p)
}

// keep keeps line l when the listing reads it.
func (k *keptLines) keep(l string) {
	if !readable(l) {
		return
	}
	if k.out.Len()+len(l)+1 > maxKept {
		k.truncated = true
		return
	}
	k.out.WriteString(l)
	k.out.WriteByte('\n')
}

// readable reports whether the listing reads a line of this kind.
func readable(l string) bool {
	return strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "    ")
}

// String is the kept lines, with the last one if it has no newline yet.
func (k *keptLines) String() string {
	if last := string(k.split.partial); last != "" && readable(last) {
		return k.out.String() + last
	}
	return k.out.String()
}

// maxLine bounds one line of a measured run's output; the rest of a
// longer line is dropped from parsing (the log keeps it).
const maxLine = 64 << 10

// timedLine is one line of output and when it arrived.
type timedLine struct {
	text string
	at   time.Time
}

// lineQueue splits a process's stdout into lines without ever blocking
// its writer; the reader takes them after each signal.
type lineQueue struct {
	mu     sync.Mutex
	split  splitter
	now    time.Time // of the write being split
	lines  []timedLine
	signal chan struct{}
}

func newLineQueue() *lineQueue {
	q := &lineQueue{signal: make(chan struct{}, 1)}
	q.split = splitter{max: maxLine, line: func(l string) { q.lines = append(q.lines, timedLine{l, q.now}) }}
	return q
}

func (q *lineQueue) Write(b []byte) (int, error) {
	q.mu.Lock()
	q.now = time.Now()
	n, _ := q.split.Write(b)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
	return n, nil
}

// close ends the last line, if it had no newline.
func (q *lineQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.now = time.Now()
	q.split.Close()
}

// take returns the lines split since the last take.
func (q *lineQueue) take() []timedLine {
	q.mu.Lock()
	defer q.mu.Unlock()
	ls := q.lines
	q.lines = nil
	return ls
}
