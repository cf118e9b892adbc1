package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/ledgerbench/ledgerbench/internal/payload"
)

// SchemaVersion is the schema this code reads and writes.
const SchemaVersion = 12

// migration is one schema step: its statements ({{pk}}, {{blob}} and
// {{norowid}} are spelled per dialect), then an optional step in Go in
// the same transaction.
type migration struct {
	stmts []string
	after func(ctx context.Context, s *Store, tx *sql.Tx) error
}

// migrations[v-1] takes the schema from version v-1 to v.
var migrations = []migration{
	// 1: the raw files and their configuration labels (perfdata's model).
	{stmts: []string{
		`CREATE TABLE uploads (
			id {{pk}},
			upload_id TEXT NOT NULL UNIQUE,
			content_hash TEXT NOT NULL UNIQUE,
			created BIGINT NOT NULL,
			by_user TEXT NOT NULL,
			files INTEGER NOT NULL,
			results INTEGER NOT NULL)`,
		`CREATE TABLE files (
			id {{pk}},
			upload BIGINT NOT NULL REFERENCES uploads(id),
			part INTEGER NOT NULL,
			name TEXT NOT NULL,
			contents {{blob}} NOT NULL,
			size BIGINT NOT NULL,
			results INTEGER NOT NULL,
			UNIQUE (upload, part))`,
		`CREATE TABLE file_labels (
			file BIGINT NOT NULL REFERENCES files(id),
			name TEXT NOT NULL,
			value TEXT NOT NULL,
			PRIMARY KEY (file, name, value)) {{norowid}}`,
		`CREATE INDEX file_labels_by_value ON file_labels (name, value, file)`,
	}},
	// 2: machines, benchmarks with their name keys, series and points,
	// rebuilt from the raw files already stored.
	{stmts: []string{
		`CREATE TABLE machines (
			id {{pk}},
			machine_id TEXT NOT NULL UNIQUE,
			first_seen BIGINT NOT NULL,
			last_seen BIGINT NOT NULL,
			runs INTEGER NOT NULL,
			facts TEXT NOT NULL)`,
		`CREATE TABLE benchmarks (
			id {{pk}},
			pkg TEXT NOT NULL,
			name TEXT NOT NULL,
			base TEXT NOT NULL,
			UNIQUE (pkg, name))`,
		`CREATE INDEX benchmarks_by_base ON benchmarks (base)`,
		`CREATE TABLE bench_labels (
			benchmark BIGINT NOT NULL REFERENCES benchmarks(id),
			key TEXT NOT NULL,
			value TEXT NOT NULL,
			PRIMARY KEY (key, value, benchmark)) {{norowid}}`,
		`ALTER TABLE files ADD COLUMN machine BIGINT REFERENCES machines(id)`,
		`ALTER TABLE files ADD COLUMN at BIGINT`,
		`ALTER TABLE files ADD COLUMN commit_id TEXT`,
		`ALTER TABLE files ADD COLUMN env_id TEXT`,
		`CREATE TABLE series (
			id {{pk}},
			machine BIGINT NOT NULL REFERENCES machines(id),
			benchmark BIGINT NOT NULL REFERENCES benchmarks(id),
			unit TEXT NOT NULL,
			higher INTEGER NOT NULL,
			points INTEGER NOT NULL,
			UNIQUE (machine, benchmark, unit))`,
		`CREATE TABLE points (
			series BIGINT NOT NULL REFERENCES series(id),
			at BIGINT NOT NULL,
			file BIGINT NOT NULL REFERENCES files(id),
			value DOUBLE PRECISION NOT NULL,
			n INTEGER NOT NULL,
			PRIMARY KEY (series, at, file)) {{norowid}}`,
	}, after: func(ctx context.Context, s *Store, tx *sql.Tx) error { return s.reindexTx(ctx, tx) }},
	// 3: change points, computed by Analyze for the series whose version
	// moved past the one analyzed.
	{stmts: []string{
		`ALTER TABLE series ADD COLUMN version BIGINT NOT NULL DEFAULT 1`,
		`ALTER TABLE series ADD COLUMN analyzed BIGINT NOT NULL DEFAULT 0`,
		`CREATE INDEX series_by_machine ON series (machine, analyzed, version)`,
		`CREATE TABLE changepoints (
			series BIGINT NOT NULL REFERENCES series(id),
			at BIGINT NOT NULL,
			file_before BIGINT NOT NULL REFERENCES files(id),
			file_after BIGINT NOT NULL REFERENCES files(id),
			before_value DOUBLE PRECISION NOT NULL,
			after_value DOUBLE PRECISION NOT NULL,
			noise DOUBLE PRECISION NOT NULL,
			worse INTEGER NOT NULL,
			small INTEGER NOT NULL,
			env_changed INTEGER NOT NULL,
			open INTEGER NOT NULL,
			PRIMARY KEY (series, at))`,
		`CREATE INDEX changepoints_open ON changepoints (open, series)`,
	}},
	// 4: a series reads without a join over all runs: each file carries
	// its upload's ID, and on PostgreSQL the points of a series are one
	// index-only range (SQLite's points table is already clustered by
	// series: WITHOUT ROWID).
	{stmts: []string{
		`ALTER TABLE files ADD COLUMN upload_key TEXT`,
		`UPDATE files SET upload_key = (SELECT u.upload_id FROM uploads u WHERE u.id = files.upload)`,
		`{{pgonly}}CREATE INDEX points_cover ON points (series, at, file) INCLUDE (value, n)`,
	}},
	// 5: each file's SHA-256, so the same bytes uploaded again under
	// another name are stored but not counted again in the series.
	{stmts: []string{
		`ALTER TABLE files ADD COLUMN data_hash TEXT`,
		`CREATE INDEX files_by_data_hash ON files (data_hash)`,
	}, after: hashFiles},
	// 6: the same bytes are stored once: a later file of the same
	// bytes keeps its own row (name, upload, part, labels) and points
	// at the first one's contents, its own left empty.
	{stmts: []string{
		`ALTER TABLE files ADD COLUMN same_as BIGINT REFERENCES files(id)`,
	}, after: shareContents},
	// 7: bisections, uploaded by nightly --bisect: what a file that
	// carries bisect-bad found, shown beside its regression; such a
	// file is no run.
	{stmts: []string{
		`CREATE TABLE bisections (
			file BIGINT PRIMARY KEY REFERENCES files(id),
			machine_id TEXT NOT NULL,
			benchmark TEXT NOT NULL,
			unit TEXT NOT NULL,
			good TEXT NOT NULL,
			bad TEXT NOT NULL,
			culprit TEXT NOT NULL,
			subject TEXT NOT NULL,
			own TEXT NOT NULL,
			share DOUBLE PRECISION)`,
		`CREATE INDEX bisections_by_machine ON bisections (machine_id)`,
	}},
	// 8: a bisection uploaded before 7 was indexed as a run: every file
	// that carries bisect-bad becomes a bisection, and the index is
	// rebuilt without them.
	{after: reclassifyBisections},
	// 9: a machine's page reads the newest bisection of each of its
	// open regressions, not every bisection of the machine.
	{stmts: []string{
		`CREATE INDEX bisections_by_regression ON bisections (machine_id, benchmark, unit, good, bad, file)`,
	}},
	// 10: each point keeps the range of its forks (the chart's band); a
	// point stored before has none (NULL), so an upgrade reads no file
	// again. PostgreSQL's covering index carries the range too.
	{stmts: []string{
		`ALTER TABLE points ADD COLUMN lo DOUBLE PRECISION`,
		`ALTER TABLE points ADD COLUMN hi DOUBLE PRECISION`,
		`{{pgonly}}DROP INDEX points_cover`,
		`{{pgonly}}CREATE INDEX points_cover ON points (series, at, file) INCLUDE (value, n, lo, hi)`,
	}},
	// 11: the home page reads what it shows, not what it is computed
	// from: each machine keeps its counts of series and of open
	// regressions (counting them per view took 8 ms of the page at 55,000
	// series), and each upload the first values of each of its labels
	// (a 1,000-file upload's labels took 13 ms of it).
	{stmts: []string{
		`ALTER TABLE machines ADD COLUMN series_count BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE machines ADD COLUMN open_count BIGINT NOT NULL DEFAULT 0`,
		`UPDATE machines SET
			series_count = (SELECT COUNT(*) FROM series s WHERE s.machine = machines.id),
			open_count = (SELECT COUNT(*) FROM changepoints c JOIN series s ON s.id = c.series WHERE s.machine = machines.id AND c.open = 1)`,
		`CREATE TABLE upload_labels (
			upload BIGINT NOT NULL REFERENCES uploads(id),
			name TEXT NOT NULL,
			value TEXT NOT NULL,
			PRIMARY KEY (upload, name, value)) {{norowid}}`,
		`INSERT INTO upload_labels (upload, name, value)
			SELECT upload, name, value FROM (
				SELECT upload, name, value, ROW_NUMBER() OVER (PARTITION BY upload, name ORDER BY value{{bytes}}) AS r
				FROM (SELECT DISTINCT f.upload, l.name, l.value FROM file_labels l JOIN files f ON f.id = l.file) d) w
			WHERE r <= ` + strconv.Itoa(MaxLabelValues),
	}},
	// 12: the functions behind a bisection's culprit (its explanation's
	// line), filled in from the stored files that carry them.
	{stmts: []string{
		`ALTER TABLE bisections ADD COLUMN functions TEXT NOT NULL DEFAULT ''`,
		`UPDATE bisections SET functions = COALESCE((SELECT MIN(l.value) FROM file_labels l
			WHERE l.file = bisections.file AND l.name = '` + payload.KeyBisectFunctions + `'), '')`,
	}},
}

// shareContents points every stored file at the first earlier file of
// the same bytes and empties its own contents.
func shareContents(ctx context.Context, s *Store, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE files SET
		same_as = (SELECT MIN(o.id) FROM files o WHERE o.data_hash = files.data_hash AND o.id < files.id),
		contents = ''
		WHERE EXISTS (SELECT 1 FROM files o WHERE o.data_hash = files.data_hash AND o.id < files.id)`)
	return err
}

// hashFiles fills in the data_hash of every stored file.
func hashFiles(ctx context.Context, s *Store, tx *sql.Tx) error {
	hashes := map[int64]string{}
	if err := eachStored(ctx, s, tx, `SELECT id, name, contents FROM files`, nil, func(id int64, _ string, data []byte) {
		hashes[id] = dataHash(data)
	}); err != nil {
		return err
	}
	for id, h := range hashes {
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE files SET data_hash = ? WHERE id = ?`), h, id); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) spell(stmt string) string {
	r := strings.NewReplacer(
		"{{pk}}", map[dialect]string{sqlite: "INTEGER PRIMARY KEY", postgres: "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"}[s.dialect],
		"{{blob}}", map[dialect]string{sqlite: "BLOB", postgres: "BYTEA"}[s.dialect],
		"{{norowid}}", map[dialect]string{sqlite: "WITHOUT ROWID", postgres: ""}[s.dialect],
		"{{bytes}}", map[dialect]string{sqlite: "", postgres: ` COLLATE "C"`}[s.dialect],
	)
	return r.Replace(stmt)
}

// Version reads the schema's version: 0 for an empty database.
func (s *Store) Version(ctx context.Context) (int, error) {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return 0, unavailable("schema version", err)
	}
	var v sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_version`).Scan(&v); err != nil {
		return 0, unavailable("schema version", err)
	}
	return int(v.Int64), nil
}

// migrate brings the schema to version target, one transaction per step.
func (s *Store) migrate(ctx context.Context, target int) error {
	v, err := s.Version(ctx)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return fmt.Errorf("store %s has schema version %d, newer than this benchctl's %d: upgrade benchctl (nothing was changed)", s.spec, v, SchemaVersion)
	}
	for ; v < target; v++ {
		if err := s.step(ctx, v+1); err != nil {
			return fmt.Errorf("store %s: migrating to schema version %d: %w", s.spec, v+1, err)
		}
	}
	return nil
}

func (s *Store) step(ctx context.Context, to int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return unavailable("begin", err)
	}
	defer tx.Rollback()
	// Another process may have migrated meanwhile: the version is read
	// again inside the transaction.
	var v sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_version`).Scan(&v); err != nil {
		return err
	}
	if int(v.Int64) >= to {
		return nil
	}
	m := migrations[to-1]
	for _, stmt := range m.stmts {
		if rest, ok := strings.CutPrefix(stmt, "{{pgonly}}"); ok {
			if s.dialect != postgres {
				continue
			}
			stmt = rest
		}
		if _, err := tx.ExecContext(ctx, s.spell(stmt)); err != nil {
			return fmt.Errorf("%s: %w", strings.Fields(stmt)[0:3], err)
		}
	}
	if m.after != nil {
		if err := m.after(ctx, s, tx); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_version (version) VALUES (?)`), to); err != nil {
		return err
	}
	return tx.Commit()
}
