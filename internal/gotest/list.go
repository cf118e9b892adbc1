package gotest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/fork"
)

// topName matches a top-level benchmark as -test.list prints it.
var topName = regexp.MustCompile(`^Benchmark([^a-z].*)?$`)

// Listing is what Benchmarks found in one test binary.
type Listing struct {
	// Top lists every top-level benchmark of the binary, selected or not.
	Top []string
	// Names are the selected benchmarks to run: the leaves of the
	// benchmark trees, full names without go test's -N suffix.
	Names []string
	// Skipped maps a benchmark that called b.Skip to its message.
	Skipped map[string]string
	// Notes say what could not be discovered, and why.
	Notes []string
}

// Benchmarks lists bin's benchmarks that pat selects, running the binary
// in dir. Each selected top-level benchmark runs once at b.N = 1 with
// -test.v, in a process of its own bounded by timeout, to discover its
// sub-benchmarks: -test.v prints every benchmark's name when it starts, so
// the leaves are known even when one of them fails. A top-level benchmark
// whose process crashes or hangs keeps the leaves it printed before (or
// itself, when it printed none), with a note.
func Benchmarks(ctx context.Context, bin, dir string, pat *Pattern, procs int, timeout time.Duration) (*Listing, error) {
	out, _, err := runBinary(ctx, bin, dir, timeout, "-test.list=^Benchmark")
	if err != nil {
		return nil, fmt.Errorf("listing the benchmarks of %s: %w", bin, err)
	}
	l := &Listing{Skipped: map[string]string{}}
	for line := range strings.SplitSeq(out, "\n") {
		if topName.MatchString(line) {
			l.Top = append(l.Top, line)
		}
	}
	for _, top := range l.Top {
		alts := pat.below(top)
		if len(alts) == 0 {
			continue
		}
		stdout, stderr, err := runBinary(ctx, bin, dir, timeout, "-test.run=^$", "-test.bench="+strings.Join(alts, "|"),
			"-test.benchtime=1x", "-test.count=1", fmt.Sprintf("-test.cpu=%d", procs), "-test.v", "-test.timeout=0")
		leaves, skipped := discovered(stdout, top)
		for name, why := range skipped {
			l.Skipped[name] = why
		}
		if err != nil {
			note := fmt.Sprintf("listing the sub-benchmarks of %s: %v", top, err)
			if t := lastLines(stderr, 3); t != "" {
				note += " (" + t + ")"
			}
			if len(leaves) == 0 {
				leaves = []string{top}
				note += "; it runs as one benchmark"
			} else {
				note += fmt.Sprintf("; the %d found before are kept", len(leaves))
			}
			l.Notes = append(l.Notes, note)
		}
		for _, n := range leaves {
			if pat.Match(n) {
				l.Names = append(l.Names, n)
			}
		}
	}
	return l, nil
}

// discovered returns the leaves under top that a -test.v run started, in
// order, without those that skipped (returned with their message).
func discovered(out, top string) (leaves []string, skipped map[string]string) {
	skipped = map[string]string{}
	var started, logged []string
	seen := map[string]bool{}
	for line := range strings.SplitSeq(out, "\n") {
		// -test.v prints a benchmark's bare name when it starts (names
		// have no blanks: go test replaces them), its result line after.
		if (line == top || strings.HasPrefix(line, top+"/")) && !strings.ContainsAny(line, " \t") {
			if !seen[line] {
				seen[line] = true
				started = append(started, line)
			}
			logged = nil
			continue
		}
		if strings.HasPrefix(line, "    ") {
			logged = append(logged, strings.TrimSpace(line)) // b.Log, b.Skip: printed before the --- line
			continue
		}
		if name, ok := strings.CutPrefix(line, "--- SKIP: "); ok {
			skipped[strings.TrimSpace(name)] = strings.Join(logged, "; ")
			logged = nil
		}
	}
	for i, n := range started {
		if i+1 < len(started) && strings.HasPrefix(started[i+1], n+"/") {
			continue // a parent: its children come next
		}
		if _, skip := skipped[n]; !skip {
			leaves = append(leaves, n)
		}
	}
	return leaves, skipped
}

// runBinary runs a test binary in dir and returns its stdout and stderr;
// the error says how it failed (its exit status, or a hang past timeout,
// after which its process group is killed).
func runBinary(ctx context.Context, bin, dir string, timeout time.Duration, args ...string) (string, string, error) {
	var stdout keptLines // bounded: a TestMain may print without end
	p, err := fork.Start(ctx, fork.Spec{Path: bin, Args: args, Dir: dir, NoLink: true, Stdout: &stdout})
	if err != nil {
		return "", "", err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	var hung bool
	select {
	case <-p.Exited():
	case <-t.C:
		hung = true
		p.Kill()
	case <-ctx.Done():
		p.Kill()
	}
	werr := p.Wait(5 * time.Second)
	errOut := strings.Join(p.StderrTail(), "\n")
	switch {
	case hung:
		return stdout.String(), errOut, fmt.Errorf("hung for %s; killed", timeout)
	case ctx.Err() != nil:
		return stdout.String(), errOut, ctx.Err()
	case werr != nil:
		return stdout.String(), errOut, werr
	}
	return stdout.String(), errOut, nil
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " | ")
}
