package profile

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// MeasuredLoop is the symbol of the measuring core's function that runs the ops of
// a counted iteration; callgrind collects only inside it.
const MeasuredLoop = "github.com/ledgerbench/ledgerbench/harness.runOps"

// CountedLoop is the worker's function that runs a counted iteration's
// measured loop (MeasuredLoop) between its gate and its end. A CPU sample
// inside the loop has it on its stack, even where the loop's op is a
// leaf that keeps no frame pointer and the frame-pointer walk of `perf
// record` skips the op's caller (MeasuredLoop itself).
const CountedLoop = "github.com/ledgerbench/ledgerbench/harness.(*Worker).runCounted"

// callgrindGODEBUG are the GODEBUG settings of a fork run under
// callgrind: no asynchronous preemption (its signals trip callgrind's
// signal bookkeeping), and no RDTSCP, which Go's runtime.cputicks uses
// where the CPU has it (AMD EPYC among others) and valgrind 3.19 cannot
// decode ("unhandled instruction bytes: 0xF 0x1 0xF9"); the runtime then
// reads the clock with RDTSC, which valgrind runs.
const callgrindGODEBUG = "asyncpreemptoff=1,cpu.rdtscp=off"

// CallgrindEnv returns env (a fork's additions to the parent's
// environment) with what a fork run under callgrind needs: GOMAXPROCS=1,
// GOGC=off, and callgrindGODEBUG appended to the GODEBUG the fork would
// otherwise get (env's last, else the parent's), so a user's own GODEBUG
// settings stay.
func CallgrindEnv(env []string) []string {
	godebug := os.Getenv("GODEBUG")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			godebug = v
		}
	}
	if godebug != "" {
		godebug += ","
	}
	out := append([]string(nil), env...)
	return append(out, "GOMAXPROCS=1", "GOGC=off", "GODEBUG="+godebug+callgrindGODEBUG)
}

// CallgrindCommand returns the program and arguments that run exe under
// callgrind, collecting inside MeasuredLoop only, with its output in out.
// It fails when valgrind is not installed.
func CallgrindCommand(exe, out string, args ...string) (string, []string, error) {
	return CallgrindIn(exe, out, []string{MeasuredLoop}, args...)
}

// CallgrindIn returns the program and arguments that run exe under
// callgrind with collection toggled on entry to and exit from each of
// toggles (none: the whole process is counted), with its output in out.
// It fails when valgrind is not installed or exe lacks toggles[0].
func CallgrindIn(exe, out string, toggles []string, args ...string) (string, []string, error) {
	vg, err := exec.LookPath("valgrind")
	if err != nil {
		return "", nil, fmt.Errorf("unavailable: valgrind is not installed (apt-get install valgrind): %w", err)
	}
	if len(toggles) > 0 {
		if err := hasSymbol(exe, toggles[0]); err != nil {
			return "", nil, err
		}
	}
	// Addresses with each position: the executable's debug information
	// names the functions inlined there (ReadInlining).
	argv := []string{"--tool=callgrind", "--dump-instr=yes"}
	for _, t := range toggles {
		argv = append(argv, "--toggle-collect="+t)
	}
	return vg, append(append(argv, "--callgrind-out-file="+out, exe), args...), nil
}

// ParseCallgrind returns the instruction total of a callgrind output file.
func ParseCallgrind(path string) (int64, error) {
	cg, err := ReadCallgrind(path)
	if err != nil {
		return 0, err
	}
	return cg.Total, nil
}

// hasSymbol checks that exe's symbol table names sym: callgrind finds the
// measured loop by name, and `go run` and `go test` link without a symbol
// table.
func hasSymbol(exe, sym string) error {
	f, err := elf.Open(exe)
	if err != nil {
		return fmt.Errorf("unavailable: cannot read %s: %w", exe, err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("unavailable: %s has no symbol table (go run and go test strip their binaries): build benchctl with `go build -o benchctl ./cmd/benchctl` and run that", exe)
	}
	for _, s := range syms {
		if s.Name == sym {
			return nil
		}
	}
	return fmt.Errorf("unavailable: %s does not contain %s", exe, sym)
}
