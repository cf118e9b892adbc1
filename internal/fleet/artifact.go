package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
)

// MaxArtifact bounds a program published to the fleet.
const MaxArtifact = 256 << 20

// ErrArtifact is a job's program that cannot be run: missing from the
// fleet's database, or bytes that do not hash to the job's hash. A job
// failing with it is not retried.
var ErrArtifact = errors.New("artifact refused")

// Publish stores the program at path in the fleet's database under the
// SHA-256 of its bytes, which it returns; a program already there is not
// stored twice.
func Publish(ctx context.Context, pool *pgxpool.Pool, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxArtifact+1))
	if err != nil {
		return "", err
	}
	return publishBytes(ctx, pool, path, data)
}

// publishBytes stores data, what path made, under its hash.
func publishBytes(ctx context.Context, pool *pgxpool.Pool, path string, data []byte) (string, error) {
	if len(data) > MaxArtifact {
		return "", fmt.Errorf("%s: over the fleet's %d MiB bound for an artifact", path, MaxArtifact>>20)
	}
	hash := hashOf(data)
	if _, err := pool.Exec(ctx, `INSERT INTO benchctl_fleet_artifact (sha256, size, bytes) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING`,
		hash, len(data), data); err != nil {
		return "", fmt.Errorf("publishing %s: %w", path, err)
	}
	return hash, nil
}

// Fetch is the path, in the cache directory dir, of the program whose
// bytes hash to hash: the cached copy when its bytes still hash to it,
// else the database's, checked before it is written. A program the
// database lacks, or whose bytes hash otherwise, is ErrArtifact.
func Fetch(ctx context.Context, pool *pgxpool.Pool, hash, dir string) (string, error) {
	path := filepath.Join(dir, hash)
	if data, err := os.ReadFile(path); err == nil && hashOf(data) == hash {
		return path, nil
	}
	data, err := fetchBytes(ctx, pool, "program", hash)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := atomicfile.ReplacePerm(path, data, 0o755); err != nil {
		return "", err
	}
	return path, nil
}

// fetchBytes reads the artifact (a what) whose bytes hash to hash from
// the fleet's database, checked.
func fetchBytes(ctx context.Context, pool *pgxpool.Pool, what, hash string) ([]byte, error) {
	var data []byte
	err := pool.QueryRow(ctx, `SELECT bytes FROM benchctl_fleet_artifact WHERE sha256 = $1`, hash).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: no %s %.12s in the fleet's database", ErrArtifact, what, hash)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %.12s: %w", what, hash, err)
	}
	if got := hashOf(data); got != hash {
		return nil, fmt.Errorf("%w: %s %.12s's bytes hash to %.12s", ErrArtifact, what, hash, got)
	}
	return data, nil
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
