package gotest

import (
	"bytes"
	"strings"
)

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
// prints costs bounded memory.
type keptLines struct {
	out       bytes.Buffer
	line      []byte // the line being written, clipped at maxKeptLine
	truncated bool   // lines were dropped at maxKept
}

func (k *keptLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if room := maxKeptLine - len(k.line); room > 0 {
			k.line = append(k.line, part[:min(len(part), room)]...)
		}
		if i < 0 {
			break
		}
		k.keep()
		p = p[i+1:]
	}
	return n, nil
}

// keep ends the current line, keeping it when the listing reads it.
func (k *keptLines) keep() {
	l := string(k.line)
	k.line = k.line[:0]
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
	if len(k.line) > 0 && readable(string(k.line)) {
		return k.out.String() + string(k.line)
	}
	return k.out.String()
}
