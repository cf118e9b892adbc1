package profile

import (
	"fmt"
	"strings"
)

// undecodable names the instructions valgrind is known not to decode on
// some CPUs, by their first bytes as valgrind prints them ("0xF 0x1
// 0xF9"), with the GODEBUG setting that keeps Go's runtime from using
// them.
var undecodable = []struct{ bytes, name, godebug string }{
	{"0xF 0x1 0xF9", "RDTSCP", "cpu.rdtscp=off"},
}

// ValgrindFault recognises, in the lines a fork wrote to stderr, a
// failure of valgrind itself rather than of the program it ran: an
// instruction valgrind cannot decode ("vex amd64->IR: unhandled
// instruction bytes"), which it turns into SIGILL, or one of its own
// assertions. It returns what happened, the instruction, and the remedy,
// or "" when the lines show neither.
func ValgrindFault(lines []string) string {
	for _, l := range lines {
		if _, b, ok := strings.Cut(l, "unhandled instruction bytes: "); ok {
			b = strings.TrimSpace(b)
			for _, u := range undecodable {
				if strings.HasPrefix(b, u.bytes) {
					return fmt.Sprintf("valgrind cannot decode the instruction %s (bytes %s) that the program ran on this CPU: a limit of valgrind, not a fault of the benchmark (the fork's environment sets GODEBUG=%s; a program that issues %s itself needs a valgrind that decodes it)",
						u.name, b, u.godebug, u.name)
				}
			}
			return fmt.Sprintf("valgrind cannot decode an instruction the program ran on this CPU (bytes %s): a limit of valgrind, not a fault of the benchmark; a newer valgrind may decode it, or a GODEBUG=cpu.<feature>=off setting may keep Go from using it", b)
		}
	}
	for _, l := range lines {
		if i := strings.Index(l, "Assertion '"); i >= 0 && strings.Contains(l, "failed") {
			return fmt.Sprintf("valgrind failed an assertion of its own (%s): a fault of valgrind, not of the benchmark", strings.TrimSpace(l))
		}
		if strings.Contains(l, "the 'impossible' happened") {
			return fmt.Sprintf("valgrind failed (%s): a fault of valgrind, not of the benchmark", strings.TrimSpace(strings.TrimLeft(l, "=0123456789 ")))
		}
	}
	return ""
}
