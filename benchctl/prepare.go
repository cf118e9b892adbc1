package benchctl

import (
	"context"
	"errors"
	"strings"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// env is the environment the library packages run commands in: this
// program, its forks' arguments and where its commentary goes.
func (a *app) env() *session.Env {
	return &session.Env{Name: a.name, Command: a.name + " " + strings.Join(a.args, " "), Executable: a.executable,
		ChildArgs: a.childArgs, ChildEnv: a.childEnv, Stderr: a.stderr, Header: a.header, Host: a.host,
		Progress: func() (func(engine.Event), func()) {
			p := newProgress(a.stderr)
			return p.event, p.close
		},
		Wrote:  func(path string) { a.written = append(a.written, path) },
		Option: flagName}
}

// hostOptions are the run flags that prepare the host.
func (f *runFlags) hostOptions() session.HostOptions {
	return session.HostOptions{CPUs: f.cpus, Strict: f.strict, Lock: f.lock.path, LockWait: f.lock.wait, IgnoreLock: f.ignoreLock,
		Cooldown: f.cooldown, IdleLoad: f.idleLoad, CooldownTimeout: f.cooldownTimeout, IdleTimeout: f.idleTimeout}
}

// prepare checks the host (refusing one that is not pinned under
// --strict), resolves --cpus into o, and takes the run lock. The caller
// defers Release.
func (a *app) prepare(ctx context.Context, o *engine.Options, f *runFlags) (*session.Session, error) {
	return session.Prepare(ctx, a.env(), f.hostOptions(), o)
}

// forksWithoutProfiles refuses, with the command's own words, what ab and
// nightly cannot do: run in process (they compare or record forks), and
// profile (profiling forks would perturb the forks they measure).
func forksWithoutProfiles(o engine.Options, noForks, noProf string) error {
	switch {
	case o.Forks == 0:
		return usageError(errors.New(noForks))
	case len(o.Profiles) > 0:
		return usageError(errors.New(noProf))
	}
	return nil
}
