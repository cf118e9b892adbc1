package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver, pure Go
)

// Store is an open results store. Its methods are safe for concurrent use.
type Store struct {
	db      *sql.DB
	dialect dialect
	spec    string

	schema int // the version it was opened at (SchemaVersion but in tests of migrations)

	mu    sync.Mutex
	bench map[[2]string]int64 // (pkg, name) → benchmarks.id, of committed rows only

	// path and held are a SQLite store's file, held open (holdFile);
	// gone is set once it was found removed or replaced.
	path string
	held *os.File
	gone atomic.Pointer[error]
}

type dialect int

const (
	sqlite dialect = iota
	postgres
)

func (d dialect) String() string {
	if d == postgres {
		return "postgres"
	}
	return "sqlite"
}

// ParseSpec checks a store specification: sqlite:PATH or a postgres://
// (or postgresql://) URL.
func ParseSpec(spec string) (dialect, string, error) {
	switch {
	case strings.HasPrefix(spec, "sqlite:"):
		path := strings.TrimPrefix(spec, "sqlite:")
		if path == "" || strings.ContainsAny(path, "?#") {
			return 0, "", fmt.Errorf("store %q: want sqlite:PATH with a file path (no query string)", spec)
		}
		return sqlite, path, nil
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		if _, err := url.Parse(spec); err != nil {
			// The URL's own error would repeat it, password included.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return 0, "", fmt.Errorf("store: the postgres URL does not parse: %v", err)
		}
		return postgres, spec, nil
	}
	return 0, "", fmt.Errorf("store %q: want sqlite:PATH or postgres://USER@HOST:PORT/DB", redact(spec))
}

// redact drops a URL's password from messages.
func redact(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.User == nil {
		return spec
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Open opens the store named by spec (see [ParseSpec]) and migrates its
// schema to [SchemaVersion].
func Open(ctx context.Context, spec string) (*Store, error) {
	return openAt(ctx, spec, SchemaVersion)
}

func openAt(ctx context.Context, spec string, version int) (*Store, error) {
	d, target, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	var db *sql.DB
	switch d {
	case sqlite:
		// WAL lets readers run beside the one writer; an immediate
		// transaction takes the write lock up front, so two writers wait
		// (busy_timeout) instead of failing on a lock upgrade.
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(30000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Set("_txlock", "immediate")
		if err := createSQLite(ctx, target); err != nil {
			return nil, fmt.Errorf("store %s: %w", spec, err)
		}
		// mode=rw: a connection the pool opens after the file was
		// removed fails, rather than making an empty database there.
		q.Set("mode", "rw")
		db, err = sql.Open("sqlite", "file:"+target+"?"+q.Encode())
	case postgres:
		db, err = sql.Open("pgx", target)
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", redact(spec), err)
	}
	if d == postgres {
		db.SetMaxOpenConns(8)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: cannot connect: %w", redact(spec), err)
	}
	s := &Store{db: db, dialect: d, spec: redact(spec), bench: map[[2]string]int64{}}
	if d == sqlite {
		if err := s.holdFile(target); err != nil {
			db.Close()
			return nil, fmt.Errorf("store %s: %w", spec, err)
		}
	}
	if err := s.migrate(ctx, version); err != nil {
		s.Close()
		return nil, err
	}
	s.schema = version
	return s, nil
}

// createSQLite makes an empty SQLite database at path if no file is
// there.
func createSQLite(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rwc")
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}

// Close closes the database.
func (s *Store) Close() error {
	if s.held != nil {
		s.held.Close()
	}
	return s.db.Close()
}

// String names the store (its password redacted).
func (s *Store) String() string { return s.spec }

// Dialect is "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.dialect.String() }

// q rewrites a query's ? placeholders to $1, $2, … for PostgreSQL. The
// store's SQL has no ? inside literals.
func (s *Store) q(query string) string {
	if s.dialect != postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ErrUnavailable wraps a failure of the database itself (down, full, read
// only): the request was valid and nothing of it was stored.
var ErrUnavailable = errors.New("store unavailable")

func unavailable(op string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: %s: %v", ErrUnavailable, op, err)
}

// ErrNotFound marks a lookup of something the store does not hold.
var ErrNotFound = errors.New("not found")

func notFound(err error, format string, args ...any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s", ErrNotFound, fmt.Sprintf(format, args...))
	}
	return unavailable(fmt.Sprintf(format, args...), err)
}
