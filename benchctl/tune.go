package benchctl

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
)

func (a *app) tuneCmd() *cobra.Command {
	var dryRun bool
	var state string
	c := &cobra.Command{
		Use:   "tune [--dry-run]",
		Short: "Pin the clock: performance governor, min frequency = max, turbo/boost off (root; reset restores)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h := a.localHost()
			if dryRun {
				writes, skipped := h.TunePlan()
				for _, w := range writes {
					fmt.Fprintf(a.stdout, "would set /%s: %q → %q (%s)\n", w.Path, w.Old, w.New, w.Why)
				}
				printSkipped(a, skipped)
				return nil
			}
			applied, skipped, err := h.Tune(state)
			for _, w := range applied {
				fmt.Fprintf(a.stdout, "set /%s: %q → %q (%s)\n", w.Path, w.Old, w.New, w.Why)
			}
			printSkipped(a, skipped)
			if err != nil {
				return failedError{err.Error()}
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
	return c
}

func (a *app) resetCmd() *cobra.Command {
	var state string
	c := &cobra.Command{
		Use:   "reset",
		Short: "Restore the knobs benchctl tune changed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			restored, err := a.localHost().Reset(state)
			for _, w := range restored {
				fmt.Fprintf(a.stdout, "restored /%s to %q\n", w.Path, w.Old)
			}
			if err != nil {
				return failedError{err.Error()}
			}
			return nil
		},
	}
	c.Flags().StringVar(&state, "state", hostcheck.DefaultStatePath, "the state file tune saved")
	return c
}

func printSkipped(a *app, skipped []string) {
	for _, s := range skipped {
		fmt.Fprintln(a.stdout, "not done:", s)
	}
}
