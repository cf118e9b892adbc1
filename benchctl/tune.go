package benchctl

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

func (a *app) tuneCmd() *cobra.Command {
	var dryRun bool
	var state string
	var lock hostLock
	c := &cobra.Command{
		Use:   "tune [--dry-run]",
		Short: "Pin the clock: performance governor, min frequency = max, turbo/boost off (root; reset restores)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h := a.env().LocalHost()
			if dryRun {
				writes, skipped := h.TunePlan()
				for _, w := range writes {
					fmt.Fprintf(a.stdout, "would set /%s: %q → %q (%s)\n", w.Path, w.Old, w.New, w.Why)
				}
				printSkipped(a, skipped)
				return nil
			}
			release, err := session.Lock(cmd.Context(), a.env(), lock.path, lock.wait)
			if err != nil {
				return err
			}
			defer release()
			applied, skipped, err := h.Tune(state)
			for _, w := range applied {
				fmt.Fprintf(a.stdout, "set /%s: %q → %q (%s)\n", w.Path, w.Old, w.New, w.Why)
			}
			printSkipped(a, skipped)
			if err != nil {
				return failedError(err.Error())
			}
			if len(applied) > 0 {
				fmt.Fprintf(a.stdout, "saved the previous values to %s: `benchctl reset` restores them\n", state)
			} else {
				fmt.Fprintln(a.stdout, "nothing changed")
			}
			return nil
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print what would change, change nothing")
	c.Flags().StringVar(&state, "state", hostcheck.DefaultStatePath, "where the previous values are saved")
	lock.register(c, "the run lock file, held while the host changes")
	return c
}

// hostLock is the run lock's flags: the lock a run holds, and that tune
// and reset take, since they change the clock no run may have changed
// under it.
type hostLock struct {
	path string
	wait time.Duration
}

// register declares --lock (described by help) and --wait-lock.
func (l *hostLock) register(c *cobra.Command, help string) {
	c.Flags().StringVar(&l.path, "lock", hostcheck.DefaultLockPath(), help)
	c.Flags().DurationVar(&l.wait, "wait-lock", 0, "when another run holds the run lock, wait up to this long for it (default: fail at once)")
}

func (a *app) resetCmd() *cobra.Command {
	var state string
	var lock hostLock
	c := &cobra.Command{
		Use:   "reset",
		Short: "Restore the knobs benchctl tune changed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			release, err := session.Lock(cmd.Context(), a.env(), lock.path, lock.wait)
			if err != nil {
				return err
			}
			defer release()
			restored, err := a.env().LocalHost().Reset(state)
			for _, w := range restored {
				fmt.Fprintf(a.stdout, "restored /%s to %q\n", w.Path, w.Old)
			}
			if err != nil {
				return failedError(err.Error())
			}
			return nil
		},
	}
	c.Flags().StringVar(&state, "state", hostcheck.DefaultStatePath, "the state file tune saved")
	lock.register(c, "the run lock file, held while the host changes")
	return c
}

func printSkipped(a *app, skipped []string) {
	for _, s := range skipped {
		fmt.Fprintln(a.stdout, "not done:", s)
	}
}
