package benchctl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// session is the prepared host of one command that measures (run, ab,
// nightly): the checked host, the CPU pinning, the run lock, and the
// waits before each fork.
type session struct {
	a       *app
	f       *runFlags
	host    *hostcheck.Host
	check   *hostcheck.Report
	release func()
}

// prepare checks the host (refusing one that is not pinned under
// --strict), resolves --cpus into o, and takes the run lock. The caller
// defers release.
func (a *app) prepare(ctx context.Context, o *engine.Options, f *runFlags) (*session, error) {
	s := &session{a: a, f: f, host: a.localHost(), release: func() {}}
	if f.cpus != "" {
		cpus, err := s.host.CheckCPUs(f.cpus)
		if err != nil {
			return nil, usageError{fmt.Errorf("--cpus: %w", err)}
		}
		o.CPUs = cpus
	}
	s.check = hostcheck.Check(s.host)
	if f.strict && !s.check.Pinned {
		return nil, failedError{"--strict: refusing to run on a host that is not pinned: " + strings.Join(s.check.Reasons, "; ")}
	}
	if !f.ignoreLock {
		release, err := a.lock(ctx, f.lock.path, f.lock.wait)
		if err != nil {
			return nil, err
		}
		s.release = func() { _ = release() }
	}
	return s, nil
}

// header describes the build, the source tree in dir and the checked host.
func (s *session) header(dir string) report.Header {
	h := report.CollectHeader(dir, s.a.name+" "+strings.Join(s.a.args, " "))
	h.MachineID, h.EnvID = s.check.MachineID, s.check.EnvID
	h.HostPinned, h.HostNote = s.pinned(), s.check.Note()
	h.BuildFlags = s.check.Facts.Build
	if s.a.header != nil {
		s.a.header(&h)
	}
	return h
}

// pinned is the header's host-pinned value.
func (s *session) pinned() string {
	if s.check.Pinned {
		return "yes"
	}
	return "no"
}

// beforeFork waits, bounded, for a cool and idle host before each fork,
// and says what it found; "" when no wait was asked for.
func (s *session) beforeFork(engine.Case, int) string {
	f, host := s.f, s.host
	if f.cooldown == 0 && f.idleLoad == 0 {
		return ""
	}
	var notes []string
	if f.cooldown > 0 {
		t, ok, err := host.WaitCool(f.cooldown, f.cooldownTimeout, time.Second)
		switch {
		case err != nil:
			notes = append(notes, "cool-down skipped: "+err.Error())
		case !ok:
			notes = append(notes, fmt.Sprintf("WARNING: still %.1f °C after %s (cool-down target %.1f °C)", t, f.cooldownTimeout, f.cooldown))
		default:
			notes = append(notes, fmt.Sprintf("cooled to %.1f °C", t))
		}
	}
	if f.idleLoad > 0 {
		l, ok, err := host.WaitIdle(f.idleLoad, f.idleTimeout, time.Second)
		switch {
		case err != nil:
			notes = append(notes, "idle wait skipped: "+err.Error())
		case !ok:
			notes = append(notes, fmt.Sprintf("WARNING: load %.2f after %s (target below %.2f)", l, f.idleTimeout, f.idleLoad))
		default:
			notes = append(notes, fmt.Sprintf("load %.2f", l))
		}
	}
	for _, n := range notes {
		if strings.HasPrefix(n, "WARNING") || strings.Contains(n, "skipped") {
			s.a.say("%s", n)
		}
	}
	return strings.Join(notes, "; ")
}

// forksWithoutProfiles refuses, with the command's own words, what ab and
// nightly cannot do: run in process (they compare or record forks), and
// profile (profiling forks would perturb the forks they measure).
func forksWithoutProfiles(o engine.Options, noForks, noProf string) error {
	switch {
	case o.Forks == 0:
		return usageError{errors.New(noForks)}
	case len(o.Profiles) > 0:
		return usageError{errors.New(noProf)}
	}
	return nil
}

// lock takes the run lock at path, waiting up to wait for another run to
// release it.
func (a *app) lock(ctx context.Context, path string, wait time.Duration) (func() error, error) {
	release, err := hostcheck.Lock(path)
	if errors.Is(err, hostcheck.ErrLocked) && wait > 0 {
		a.say("%v: waiting up to %s for the run lock", err, wait)
		release, err = hostcheck.LockWait(ctx, path, wait)
	}
	switch {
	case errors.Is(err, hostcheck.ErrLocked):
		return nil, failedError{err.Error() + ": wait for it (--wait-lock), or pass --ignore-lock"}
	case err != nil:
		return nil, failedError{err.Error()}
	}
	return release, nil
}
