package store

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/internal/payload"
)

// Upload is what a stored upload's caller learns.
type Upload struct {
	ID      string   // the upload's ID: a prefix of its content hash
	FileIDs []string // ID/part, one per file
	Results int      // result lines
	// Machines are the machine-ids of the files, in order, without repeats.
	Machines []string
	// Existing reports that these exact files were already stored, by an
	// earlier upload with this ID: nothing was written.
	Existing bool
}

// ErrInvalid marks an upload refused for its content: nothing was stored.
var ErrInvalid = errors.New("invalid upload")

// parsed is one validated file.
type parsed struct {
	payload.File
	labels  map[[2]string]bool // config key/value pairs seen
	machine string
	results int
}

// validate reads every file whole: any syntax error, a result without a
// machine-id, two machine-ids in one file or a file without results
// refuses the upload.
func validate(files []payload.File) ([]parsed, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no files", ErrInvalid)
	}
	out := make([]parsed, 0, len(files))
	for _, f := range files {
		p := parsed{File: f, labels: map[[2]string]bool{}}
		r := benchfmt.NewReader(bytes.NewReader(f.Data), f.Name)
		for r.Scan() {
			switch rec := r.Result().(type) {
			case *benchfmt.SyntaxError:
				return nil, fmt.Errorf("%w: %v", ErrInvalid, rec)
			case *benchfmt.Result:
				m := string(rec.GetConfig("machine-id"))
				if m == "" {
					_, line := rec.Pos()
					return nil, fmt.Errorf("%w: %s:%d: result without a machine-id configuration line (benchctl writes one; for other tools' files add a \"machine-id: NAME\" line)", ErrInvalid, f.Name, line)
				}
				if p.machine != "" && m != p.machine {
					return nil, fmt.Errorf("%w: %s: two machine-ids (%s and %s) in one file", ErrInvalid, f.Name, p.machine, m)
				}
				p.machine = m
				p.results++
				for _, c := range rec.Config {
					p.labels[[2]string{c.Key, string(c.Value)}] = true
				}
			}
		}
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, f.Name, err)
		}
		if p.results == 0 {
			return nil, fmt.Errorf("%w: %s: no benchmark results", ErrInvalid, f.Name)
		}
		out = append(out, p)
	}
	return out, nil
}

// Put stores an upload of files by user (empty when anonymous), all or
// nothing. The same files uploaded again return the first upload with
// Existing set.
func (s *Store) Put(ctx context.Context, files []payload.File, user string) (*Upload, error) {
	ps, err := validate(files)
	if err != nil {
		return nil, err
	}
	hash := payload.HashFiles(files)
	up := &Upload{ID: hash[:16]}
	for i, p := range ps {
		up.FileIDs = append(up.FileIDs, fmt.Sprintf("%s/%d", up.ID, i))
		up.Results += p.results
		if !slices.Contains(up.Machines, p.machine) {
			up.Machines = append(up.Machines, p.machine)
		}
	}
	if ok, err := s.exists(ctx, hash); err != nil || ok {
		up.Existing = ok
		return up, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, unavailable("begin", err)
	}
	defer tx.Rollback()
	created := time.Now().UTC()
	var pk int64
	err = tx.QueryRowContext(ctx, s.q(`INSERT INTO uploads (upload_id, content_hash, created, by_user, files, results)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`),
		up.ID, hash, created.UnixNano(), user, len(ps), up.Results).Scan(&pk)
	if errors.Is(err, sql.ErrNoRows) {
		// A concurrent upload of the same files committed first.
		up.Existing = true
		return up, nil
	}
	if err != nil {
		return nil, unavailable("insert upload", err)
	}
	ix := newIndexer(s, SchemaVersion, true)
	for i, p := range ps {
		fid, err := s.insertFile(ctx, tx, pk, i, p, map[string]string{
			"upload": up.ID, "upload-part": up.FileIDs[i], "upload-file": p.Name,
			"upload-time": created.Format(time.RFC3339), "by": user})
		if err != nil {
			return nil, unavailable("insert file", err)
		}
		if err := ix.file(ctx, tx, fid, p.Name, p.Data, created); err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE files SET upload_key = ? WHERE upload = ?`), up.ID, pk); err != nil {
		return nil, unavailable("insert file", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, unavailable("commit", err)
	}
	ix.committed()
	return up, nil
}

func (s *Store) exists(ctx context.Context, hash string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM uploads WHERE content_hash = ?`), hash).Scan(&n)
	return n > 0, unavailable("look up upload", err)
}

// insertFile writes a file's raw contents (deflated) and its labels: the
// configuration pairs it contains and the server's own (empty ones left
// out).
func (s *Store) insertFile(ctx context.Context, tx *sql.Tx, upload int64, part int, p parsed, server map[string]string) (int64, error) {
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.DefaultCompression)
	w.Write(p.Data)
	w.Close()
	var fid int64
	if err := tx.QueryRowContext(ctx, s.q(`INSERT INTO files (upload, part, name, contents, size, results) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`),
		upload, part, p.Name, z.Bytes(), len(p.Data), p.results).Scan(&fid); err != nil {
		return 0, err
	}
	for k, v := range server {
		if v != "" {
			p.labels[[2]string{k, v}] = true
		}
	}
	pairs := make([][2]string, 0, len(p.labels))
	for kv := range p.labels {
		pairs = append(pairs, kv)
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0]+"\x00"+pairs[i][1] < pairs[j][0]+"\x00"+pairs[j][1] })
	for len(pairs) > 0 {
		n := min(len(pairs), 300)
		args := make([]any, 0, 3*n)
		for _, kv := range pairs[:n] {
			args = append(args, fid, kv[0], kv[1])
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO file_labels (file, name, value) VALUES `+rows(n, 3)), args...); err != nil {
			return 0, err
		}
		pairs = pairs[n:]
	}
	return fid, nil
}

// rows spells n rows of k placeholders: (?, ?), (?, ?), …
func rows(n, k int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", k), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// inflate reads a stored file's contents back.
func inflate(z []byte) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(z))
	defer r.Close()
	return io.ReadAll(r)
}
