package fork

import (
	"fmt"
	"strings"
	"testing"
)

// TestTailKeepsValgrindsFatalLine: valgrind's line for an instruction it
// cannot decode comes before the register dump of the SIGILL it raises,
// which pushes it out of the tail; the tail keeps it as the fatal line.
func TestTailKeepsValgrindsFatalLine(t *testing.T) {
	for _, first := range []string{
		"vex amd64->IR: unhandled instruction bytes: 0xF 0x1 0xF9 0x48 0xC1 0xE2 0x20 0x48 0x1 0xD0",
		"Callgrind: threads.c:247 (vgCallgrind_post_signal): Assertion 'sigNum == vgCallgrind_current_state.sig' failed.",
	} {
		tl := &tail{max: 5}
		var b strings.Builder
		b.WriteString("==1== Callgrind, a call-graph generating cache profiler\n" + first + "\nSIGILL: illegal instruction\n")
		for i := range 30 {
			fmt.Fprintf(&b, "r%d 0x%x\n", i, i)
		}
		tl.Write([]byte(b.String()))
		if got := tl.fatal; got != first {
			t.Errorf("fatal line %q, want %q", got, first)
		}
		if ls := tl.lines(); len(ls) != 5 || ls[4] != "r29 0x1d" {
			t.Errorf("tail %q", ls)
		}
	}
	tl := &tail{max: 5}
	tl.Write([]byte("an Assertion 'x' of the program's own, failed\n"))
	if tl.fatal != "" {
		t.Errorf("a line that only mentions an assertion is fatal: %q", tl.fatal)
	}
}
