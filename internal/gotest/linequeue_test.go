package gotest

import (
	"strings"
	"testing"
)

func TestLineQueueSplitsWritesIntoLines(t *testing.T) {
	q := newLineQueue()
	for _, w := range []string{"goos: li", "nux\r\nBenchmarkA-2 \t 10\t", " 5 ns/op\n", strings.Repeat("x", maxLine+10), "\nlast"} {
		q.Write([]byte(w))
	}
	q.close()
	var got []string
	for _, l := range q.take() {
		got = append(got, l.text)
	}
	if len(got) != 4 || got[0] != "goos: linux" || got[1] != "BenchmarkA-2 \t 10\t 5 ns/op" || len(got[2]) != maxLine || got[3] != "last" {
		t.Errorf("lines %q (lengths %d)", got[:min(len(got), 2)], len(got))
	}
	select {
	case <-q.signal:
	default:
		t.Error("no signal after writes")
	}
}
