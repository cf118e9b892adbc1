package nightly

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Fleet registers a run's rounds as the nightly of a class of a fleet's
// machines, returning when its next night is due (the fleet's Remote).
type Fleet interface {
	Schedule(ctx context.Context, r ab.Rounds, every, at time.Duration) (time.Time, error)
}

// ErrNotAFleet is the error of a fleet that cannot schedule.
var ErrNotAFleet = errors.New("this fleet cannot schedule a nightly")

// OnFleet registers o's cases, run by the running binary in o.Engine's
// rounds, as the nightly of remote's class: every every, at at past each
// multiple of it (every 24h at 3h: at 03:00 UTC). The night just past
// runs when an agent takes it up; each agent uploads its night to its
// results server, where each machine's series is analysed as any
// other's. What runs on one machine only (an anchor, bisections,
// packages' test binaries) is refused.
func OnFleet(ctx context.Context, remote ab.Remote, o Options, every, at time.Duration) (time.Time, error) {
	f, ok := remote.(Fleet)
	if !ok {
		return time.Time{}, ErrNotAFleet
	}
	if err := CheckFleet(o); err != nil {
		return time.Time{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return time.Time{}, session.FailedError{Msg: "this program, to publish to the fleet: " + err.Error()}
	}
	r := ab.Rounds{Engine: o.Engine, Cases: o.Cases, Sides: []engine.Side{{Launch: engine.Program{Executable: exe}}}}
	return f.Schedule(ctx, r, every, at)
}

// CheckFleet refuses what a nightly on a fleet cannot do: it runs the
// program registering it, plainly, on a machine with no checkout.
func CheckFleet(o Options) error {
	switch {
	case len(o.Packages) > 0:
		return ab.ErrFleetPackages
	case o.Anchor != "" && o.Anchor != "none":
		return session.Input("a nightly on a fleet is a plain run: {Anchor} runs on one machine")
	case o.Bisect:
		return session.Input("a nightly on a fleet does not {Bisect}: the results server finds its change points")
	}
	return nil
}
