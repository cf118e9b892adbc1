package session

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

// HostOptions say how to prepare the host.
type HostOptions struct {
	// CPUs, when set, is the list of CPUs to pin forks to ("0-3,6").
	CPUs string
	// Strict refuses a host that is not pinned.
	Strict bool
	// Lock is the run lock's path; LockWait how long to wait for another
	// run to release it (0: fail at once). IgnoreLock runs without it.
	Lock       string
	LockWait   time.Duration
	IgnoreLock bool
	// Cooldown (°C) and IdleLoad (load average), when positive, are waited
	// for before each fork, each up to its timeout.
	Cooldown, IdleLoad           float64
	CooldownTimeout, IdleTimeout time.Duration
}

// Session is one command's prepared host.
type Session struct {
	Env *Env
	// Check is the host check made when the session was prepared.
	Check   *hostcheck.Report
	opts    HostOptions
	host    *hostcheck.Host
	release func()
}

// Prepare checks the host (refusing one that is not pinned when Strict),
// resolves CPUs into o, takes the run lock, and refuses a duet (o.Duet)
// the CPUs cannot hold. The caller calls Release.
func Prepare(ctx context.Context, env *Env, ho HostOptions, o *engine.Options) (*Session, error) {
	s := &Session{Env: env, opts: ho, host: env.LocalHost(), release: func() {}}
	if ho.CPUs != "" {
		cpus, err := s.host.CheckCPUs(ho.CPUs)
		if err != nil {
			return nil, Input("{CPUs}: %w", err)
		}
		o.CPUs = cpus
	}
	s.Check = hostcheck.Check(s.host)
	if ho.Strict && !s.Check.Pinned {
		return nil, Failed("{Strict}: refusing to run on a host that is not pinned: %s", strings.Join(s.Check.Reasons, "; "))
	}
	if !ho.IgnoreLock {
		release, err := Lock(ctx, env, ho.Lock, ho.LockWait)
		if err != nil {
			return nil, err
		}
		s.release = func() { _ = release() }
	}
	if err := checkDuet(*o); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

// With is the session, run lock and host check included, in another
// environment (one that tells no one what it wrote, say). Release the
// original, not the copy.
func (s *Session) With(env *Env) *Session {
	c := *s
	c.Env = env
	return &c
}

// Release gives the run lock back.
func (s *Session) Release() { s.release() }

// IgnoresLock says whether the session runs without the run lock (so
// another command's worktrees may be in use).
func (s *Session) IgnoresLock() bool { return s.opts.IgnoreLock }

// Header describes the build, the source tree in dir and the checked host.
func (s *Session) Header(dir string) report.Header {
	h := report.CollectHeader(dir, s.Env.Command)
	h.MachineID, h.EnvID = s.Check.MachineID, s.Check.EnvID
	h.HostPinned, h.HostNote = s.Pinned(), s.Check.Note()
	h.BuildFlags = s.Check.Facts.Build
	if s.Env.Header != nil {
		s.Env.Header(&h)
	}
	return h
}

// Pinned is the header's host-pinned value.
func (s *Session) Pinned() string {
	if s.Check.Pinned {
		return "yes"
	}
	return "no"
}

// BeforeFork waits, bounded, for a cool and idle host before each fork,
// and says what it found; "" when no wait was asked for.
func (s *Session) BeforeFork(engine.Case, int) string {
	ho, host := s.opts, s.host
	if ho.Cooldown == 0 && ho.IdleLoad == 0 {
		return ""
	}
	var notes []string
	if ho.Cooldown > 0 {
		t, ok, err := host.WaitCool(ho.Cooldown, ho.CooldownTimeout, time.Second)
		switch {
		case err != nil:
			notes = append(notes, "cool-down skipped: "+err.Error())
		case !ok:
			notes = append(notes, fmt.Sprintf("WARNING: still %.1f °C after %s (cool-down target %.1f °C)", t, ho.CooldownTimeout, ho.Cooldown))
		default:
			notes = append(notes, fmt.Sprintf("cooled to %.1f °C", t))
		}
	}
	if ho.IdleLoad > 0 {
		l, ok, err := host.WaitIdle(ho.IdleLoad, ho.IdleTimeout, time.Second)
		switch {
		case err != nil:
			notes = append(notes, "idle wait skipped: "+err.Error())
		case !ok:
			notes = append(notes, fmt.Sprintf("WARNING: load %.2f after %s (target below %.2f)", l, ho.IdleTimeout, ho.IdleLoad))
		default:
			notes = append(notes, fmt.Sprintf("load %.2f", l))
		}
	}
	for _, n := range notes {
		if strings.HasPrefix(n, "WARNING") || strings.Contains(n, "skipped") {
			s.Env.Say("%s", n)
		}
	}
	return strings.Join(notes, "; ")
}

// Lock takes the run lock at path, waiting up to wait for another run to
// release it.
func Lock(ctx context.Context, env *Env, path string, wait time.Duration) (func() error, error) {
	release, err := hostcheck.Lock(path)
	if errors.Is(err, hostcheck.ErrLocked) && wait > 0 {
		env.Say("%v: waiting up to %s for the run lock", err, wait)
		release, err = hostcheck.LockWait(ctx, path, wait)
	}
	switch {
	case errors.Is(err, hostcheck.ErrLocked):
		return nil, Failed("%v: wait for it ({LockWait}), or pass {IgnoreLock}", err)
	case err != nil:
		return nil, FailedError{Msg: err.Error()}
	}
	return release, nil
}

// checkDuet refuses a duet where it cannot pair: a side needs a CPU of
// its own. It is called once the CPUs are resolved.
func checkDuet(o engine.Options) error {
	if !o.Duet {
		return nil
	}
	if _, err := engine.DuetCPUs(o.CPUs); err != nil {
		return Input("{Duet}: %w", err)
	}
	return nil
}
