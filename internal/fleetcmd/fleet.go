package fleetcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/fleet"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Commands are agent and fleet of the program named name, made anew for
// each command tree: add them to benchctl.Config's Commands.
func Commands(name string) []*cobra.Command { return []*cobra.Command{agentCmd(name), fleetCmd(name)} }

func fleetCmd(name string) *cobra.Command {
	c := &cobra.Command{Use: "fleet", Short: "Manage a fleet's database"}
	var db string
	m := &cobra.Command{
		Use:     "migrate --db URL",
		Short:   "Create or upgrade the fleet's tables (River's, with River's migrator, and the fleet's own)",
		Example: fmt.Sprintf(`  %s fleet migrate --db postgres://bench@db.internal:5432/results`, name),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if db == "" {
				return usageError(errors.New("--db is required: the fleet's PostgreSQL database"))
			}
			pool, err := fleet.Open(cmd.Context(), db)
			if err != nil {
				return usageError(err)
			}
			defer pool.Close()
			if err := fleet.Migrate(cmd.Context(), pool); err != nil {
				return failedError(err.Error())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "the fleet's tables are up to date in %s\n", redact(db))
			return nil
		},
	}
	m.Flags().StringVar(&db, "db", "", "the fleet's PostgreSQL database (postgres://USER@HOST:PORT/DB)")
	c.AddCommand(m, nightliesCmd(name))
	return c
}

// nightliesCmd lists the registered nightlies, or removes one.
func nightliesCmd(name string) *cobra.Command {
	var db, remove string
	c := &cobra.Command{
		Use:   "nightlies --db URL [--remove CLASS]",
		Short: "List the classes' nightlies (registered by nightly --fleet), or remove one",
		Example: fmt.Sprintf(`  %[1]s fleet nightlies --db postgres://bench@db.internal:5432/results
  %[1]s fleet nightlies --db postgres://bench@db.internal:5432/results --remove epyc-9655`, name),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if db == "" {
				return usageError(errors.New("--db is required: the fleet's PostgreSQL database"))
			}
			pool, err := openFleet(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer pool.Close()
			out := cmd.OutOrStdout()
			if remove != "" {
				ok, err := fleet.RemoveNightly(cmd.Context(), pool, remove)
				if err != nil {
					return failedError(err.Error())
				}
				if !ok {
					return usageError(fmt.Errorf("--remove %s: class %s has no nightly", remove, remove))
				}
				fmt.Fprintf(out, "removed the nightly of class %s: the agents stop scheduling it within %s\n", remove, fleet.DefaultNightlyPoll)
				return nil
			}
			ns, err := fleet.Nightlies(cmd.Context(), pool)
			if err != nil {
				return failedError(err.Error())
			}
			for _, n := range ns {
				fmt.Fprintf(out, "%s\tevery %s at %s\tnext %s\t%d cases × %d rounds\tprogram %.12s\n", n.Class, n.Every, n.At,
					n.Next(time.Now()).UTC().Format(time.RFC3339), len(n.Job.Cases), n.Job.Count, n.Job.Sides[0].SHA256)
			}
			if len(ns) == 0 {
				fmt.Fprintln(out, "no nightly is registered: nightly --fleet registers one")
			}
			return nil
		},
	}
	c.Flags().StringVar(&db, "db", "", "the fleet's PostgreSQL database (postgres://USER@HOST:PORT/DB)")
	c.Flags().StringVar(&remove, "remove", "", "remove this class's nightly")
	return c
}

// Importing the package lets ab --fleet connect.
func init() { ab.Fleets = Remote }

// Remote is ab's measurement on the agents of o.Class of the fleet whose
// database is o.URL (ab.Fleets). Close the Closer after.
func Remote(ctx context.Context, o ab.FleetOptions) (ab.Remote, io.Closer, error) {
	pool, err := openFleet(ctx, o.URL)
	if err != nil {
		return nil, nil, err
	}
	return &fleet.Remote{Pool: pool, Class: o.Class, JobTime: o.JobTime}, closer{pool}, nil
}

type closer struct{ pool *pgxpool.Pool }

func (c closer) Close() error { c.pool.Close(); return nil }

// openFleet connects to a migrated fleet database: one that is not is a
// usage error saying to migrate it.
func openFleet(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pool, err := fleet.Open(ctx, url)
	if err != nil {
		return nil, usageError(err)
	}
	if err := fleet.Check(ctx, pool); err != nil {
		pool.Close()
		return nil, usageError(err)
	}
	return pool, nil
}

// redact is a database URL without its password (url.URL.Redacted).
func redact(db string) string {
	if u, err := url.Parse(db); err == nil {
		return u.Redacted()
	}
	return db
}

func usageError(err error) error   { return session.UsageError{Err: err} }
func failedError(msg string) error { return session.FailedError{Msg: msg} }

// exitOf is a session error, its options named by agent's flags, with
// its exit code: 2 for bad input.
func exitOf(err error) error {
	msg := errors.New(session.Words(err, func(option string) string { return "--" + strings.ToLower(option) }))
	var in session.UsageError
	if errors.As(err, &in) {
		return usageError(msg)
	}
	return failedError(msg.Error())
}
