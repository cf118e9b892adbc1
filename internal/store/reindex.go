package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Reindex rebuilds everything but the raw files and their labels —
// machines, benchmarks, series, points and change points — from the raw
// files, in one transaction.
func (s *Store) Reindex(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return unavailable("begin", err)
	}
	defer tx.Rollback()
	if err := clearIndex(ctx, s, tx); err != nil {
		return unavailable("reindex", err)
	}
	if err := s.reindexTx(ctx, tx); err != nil {
		return err
	}
	return unavailable("commit", tx.Commit())
}

// reindexTx indexes every stored file, oldest upload first, in tx.
func (s *Store) reindexTx(ctx context.Context, tx *sql.Tx) error {
	// A migration reindexes with the schema it is creating: its own
	// version is not recorded yet, the one before it is.
	var recorded int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&recorded); err != nil {
		return unavailable("reindex", err)
	}
	version := min(recorded+1, SchemaVersion)
	contents := "f.contents"
	if version >= 6 {
		// A file of bytes stored before reads the first one's.
		contents = "COALESCE((SELECT o.contents FROM files o WHERE o.id = f.same_as), f.contents)"
	}
	runs := ""
	if version >= 7 {
		runs = " WHERE f.id NOT IN (SELECT file FROM bisections)" // a bisection is no run
	}
	rs, err := tx.QueryContext(ctx, `SELECT f.id, f.name, `+contents+`, u.created FROM files f JOIN uploads u ON u.id = f.upload`+runs+` ORDER BY u.id, f.part`)
	if err != nil {
		return unavailable("reindex", err)
	}
	type row struct {
		id      int64
		name    string
		z       []byte
		created int64
	}
	var all []row
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.id, &r.name, &r.z, &r.created); err != nil {
			rs.Close()
			return unavailable("reindex", err)
		}
		all = append(all, r)
	}
	if err := rs.Close(); err != nil {
		return unavailable("reindex", err)
	}
	ix := newIndexer(s, version, false)
	seen := map[string]bool{} // the same bytes count once, as Put counts them
	for _, r := range all {
		data, err := inflate(r.z)
		if err != nil {
			return fmt.Errorf("reindex: file %d (%s): stored contents unreadable: %w", r.id, r.name, err)
		}
		h := dataHash(data)
		if seen[h] {
			continue
		}
		seen[h] = true
		if err := ix.file(ctx, tx, r.id, r.name, data, time.Unix(0, r.created).UTC()); err != nil {
			return err
		}
	}
	return nil
}

// clearIndex empties everything the index rebuilds from the raw files:
// machines, benchmarks, series, points and change points.
func clearIndex(ctx context.Context, s *Store, tx *sql.Tx) error {
	for _, t := range []string{"changepoints", "points", "series", "bench_labels", "benchmarks"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE files SET machine = NULL`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM machines`); err != nil {
		return err
	}
	s.mu.Lock()
	s.bench = map[[2]string]int64{}
	s.mu.Unlock()
	return nil
}

// eachStored calls f with the id, name and raw bytes of every file query
// selects (its id, name and stored contents, in that order), in tx. f
// must not use tx: the rows hold its connection until they are read.
func eachStored(ctx context.Context, s *Store, tx *sql.Tx, query string, args []any, f func(id int64, name string, data []byte)) error {
	rs, err := tx.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		var id int64
		var name string
		var z []byte
		if err := rs.Scan(&id, &name, &z); err != nil {
			return err
		}
		data, err := inflate(z)
		if err != nil {
			return fmt.Errorf("file %d: stored contents unreadable: %w", id, err)
		}
		f(id, name, data)
	}
	return rs.Close()
}
