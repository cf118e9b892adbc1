package testenv

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx"
)

// PostgresDB is the URL of a database of the test's own, created on the
// PostgreSQL server LEDGERBENCH_POSTGRES names
// (postgres://USER@HOST:PORT/DB, a user who may create databases) and
// dropped at the test's end. Without LEDGERBENCH_POSTGRES the test is
// skipped, or fails in CI ([Missing]).
func PostgresDB(t testing.TB) string {
	t.Helper()
	admin := os.Getenv("LEDGERBENCH_POSTGRES")
	if admin == "" {
		Missing(t, "LEDGERBENCH_POSTGRES is not set: the PostgreSQL tests need postgres://USER@HOST:PORT/DB (.ci/run starts a server and sets it)")
	}
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := fmt.Sprintf("lbtest_%d_%d", time.Now().UnixNano(), rand.IntN(1e6))
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("LEDGERBENCH_POSTGRES=%s: cannot create a test database: %v", admin, err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", admin)
		if err == nil {
			db.Exec("DROP DATABASE " + name + " WITH (FORCE)")
			db.Close()
		}
	})
	i := strings.LastIndexByte(admin, '/')
	rest := ""
	if q := strings.IndexByte(admin[i:], '?'); q >= 0 {
		rest = admin[i+q:]
	}
	return admin[:i+1] + name + rest
}
