package fleet

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// QueueOf is the River queue of a class of machines: "bench_" and the
// class, lower-cased, as River's queue names must be.
func QueueOf(class string) string { return "bench_" + strings.ToLower(class) }

var classRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// checkClass refuses a class that cannot name a queue.
func checkClass(class string) error {
	if !classRE.MatchString(class) {
		return fmt.Errorf("class %q: want 1 to 64 letters, digits, _ or - (a machine fingerprint)", class)
	}
	return nil
}

// Open connects to the fleet's PostgreSQL database.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("fleet database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("fleet database: %w", err)
	}
	return pool, nil
}

// Migrate brings River's tables up to the version this River needs, with
// River's migrator, and creates the fleet's own tables.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrating River's tables: %w", err)
	}
	if _, err := pool.Exec(ctx, schema); err != nil {
		return fmt.Errorf("creating the fleet's tables: %w", err)
	}
	return nil
}

// schema is the fleet's tables: a job's result file, one per job (the
// key makes a second completion fail), with its sides' result.Runs as
// JSON when the agent kept them, and the agent and attempt that made it; the agents, by name, with their class and when they were
// last seen; each class's nightly; the programs jobs run, by the SHA-256
// of their bytes.
const schema = `
CREATE TABLE IF NOT EXISTS benchctl_fleet_result (
	job_id     bigint PRIMARY KEY,
	comparison text NOT NULL,
	agent      text NOT NULL,
	attempt    int NOT NULL,
	file       bytea NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS benchctl_fleet_result_comparison ON benchctl_fleet_result (comparison);
ALTER TABLE benchctl_fleet_result ADD COLUMN IF NOT EXISTS runs bytea;
CREATE TABLE IF NOT EXISTS benchctl_fleet_agent (
	name    text PRIMARY KEY,
	class   text NOT NULL,
	seen_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS benchctl_fleet_nightly (
	class         text PRIMARY KEY,
	nightly       jsonb NOT NULL,
	registered_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS benchctl_fleet_artifact (
	sha256     text PRIMARY KEY,
	size       bigint NOT NULL,
	bytes      bytea NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
`

// Check refuses a database whose fleet tables are missing (never
// migrated, or by an older benchctl).
func Check(ctx context.Context, pool *pgxpool.Pool) error {
	for _, table := range []string{"river_job", "benchctl_fleet_result", "benchctl_fleet_agent", "benchctl_fleet_nightly", "benchctl_fleet_artifact"} {
		var ok bool
		if err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&ok); err != nil {
			return fmt.Errorf("fleet database: %w", err)
		}
		if !ok {
			return fmt.Errorf("fleet database: no table %s: it was not migrated, or by an older benchctl", table)
		}
	}
	return nil
}
