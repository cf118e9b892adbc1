package store

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
)

// server labels are the ones the store adds to every result of a file.
func serverLabels(upload string, part int, name string, created int64, by string) map[string]string {
	m := map[string]string{
		"upload":      upload,
		"upload-part": fmt.Sprintf("%s/%d", upload, part),
		"upload-file": name,
		"upload-time": time.Unix(0, created).UTC().Format(time.RFC3339),
	}
	if by != "" {
		m["by"] = by
	}
	return m
}

type storedFile struct {
	id, created      int64
	upload, name, by string
	part             int
}

func (s *Store) matchingFiles(ctx context.Context, q *Query, limit int) ([]storedFile, error) {
	where, args := q.where()
	sqlText := `SELECT f.id, u.upload_id, f.part, f.name, u.created, u.by_user FROM files f JOIN uploads u ON u.id = f.upload
		WHERE ` + where + ` ORDER BY u.id DESC, f.part`
	if limit > 0 {
		sqlText += fmt.Sprintf(" LIMIT %d", limit)
	}
	rs, err := s.db.QueryContext(ctx, s.q(sqlText), args...)
	if err != nil {
		return nil, unavailable("query", err)
	}
	defer rs.Close()
	var out []storedFile
	for rs.Next() {
		var f storedFile
		if err := rs.Scan(&f.id, &f.upload, &f.part, &f.name, &f.created, &f.by); err != nil {
			return nil, unavailable("query", err)
		}
		out = append(out, f)
	}
	return out, unavailable("query", rs.Err())
}

// Contents returns a stored file's raw bytes, exactly as uploaded.
func (s *Store) Contents(ctx context.Context, uploadID string, part int) (name string, data []byte, err error) {
	var z []byte
	err = s.db.QueryRowContext(ctx, s.q(`SELECT f.name, f.contents FROM files f JOIN uploads u ON u.id = f.upload WHERE u.upload_id = ? AND f.part = ?`),
		uploadID, part).Scan(&name, &z)
	if err != nil {
		return "", nil, notFound(err, "upload %s/%d", uploadID, part)
	}
	data, err = inflate(z)
	return name, data, err
}

func (s *Store) contentsOf(ctx context.Context, fid int64) ([]byte, error) {
	var z []byte
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT contents FROM files WHERE id = ?`), fid).Scan(&z); err != nil {
		return nil, unavailable("read file", err)
	}
	return inflate(z)
}

// Search calls fn for each result matching q, newest upload first and
// in file order within an upload, with the server's labels set in its
// configuration.
func (s *Store) Search(ctx context.Context, q *Query, fn func(*benchfmt.Result) error) error {
	files, err := s.matchingFiles(ctx, q, 0)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := s.eachResult(ctx, f, q, fn); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) eachResult(ctx context.Context, f storedFile, q *Query, fn func(*benchfmt.Result) error) error {
	data, err := s.contentsOf(ctx, f.id)
	if err != nil {
		return err
	}
	labels := serverLabels(f.upload, f.part, f.name, f.created, f.by)
	r := benchfmt.NewReader(bytes.NewReader(data), f.name)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok || !q.matches(res, labels) {
			continue
		}
		for _, k := range []string{"upload", "upload-part", "upload-file", "upload-time", "by"} {
			if v, ok := labels[k]; ok {
				res.SetConfig(k, v)
				// A file configuration line, so a benchfmt.Writer prints it.
				if i, ok := res.ConfigIndex(k); ok {
					res.Config[i].File = true
				}
			}
		}
		if err := fn(res); err != nil {
			return err
		}
	}
	return r.Err()
}

// UploadInfo is one upload in a list: how many of its results matched,
// and the values its files have of the labels asked for (distinct values
// sorted and joined by ", ", at most 8).
type UploadInfo struct {
	Count       int
	UploadID    string
	LabelValues map[string]string `json:",omitempty"`
}

// ListUploads lists the uploads holding a result that matches q, newest
// first, at most limit of them.
func (s *Store) ListUploads(ctx context.Context, q *Query, extraLabels []string, limit int) ([]UploadInfo, error) {
	var out []UploadInfo
	index := map[string]int{}
	if len(q.parts) == 0 {
		rs, err := s.db.QueryContext(ctx, s.q(fmt.Sprintf(`SELECT upload_id, results FROM uploads ORDER BY id DESC LIMIT %d`, limit)))
		if err != nil {
			return nil, unavailable("list uploads", err)
		}
		for rs.Next() {
			var ui UploadInfo
			if err := rs.Scan(&ui.UploadID, &ui.Count); err != nil {
				rs.Close()
				return nil, unavailable("list uploads", err)
			}
			out = append(out, ui)
		}
		rs.Close()
	} else {
		files, err := s.matchingFiles(ctx, q, 0)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			i, ok := index[f.upload]
			if !ok {
				if len(out) == limit {
					break
				}
				i = len(out)
				index[f.upload] = i
				out = append(out, UploadInfo{UploadID: f.upload})
			}
			if err := s.eachResult(ctx, f, q, func(*benchfmt.Result) error { out[i].Count++; return nil }); err != nil {
				return nil, err
			}
		}
	}
	if len(extraLabels) == 0 {
		return out, nil
	}
	for i := range out {
		out[i].LabelValues = map[string]string{}
		for _, name := range extraLabels {
			rs, err := s.db.QueryContext(ctx, s.q(`SELECT DISTINCT l.value FROM file_labels l JOIN files f ON f.id = l.file JOIN uploads u ON u.id = f.upload
				WHERE u.upload_id = ? AND l.name = ? ORDER BY l.value LIMIT 8`), out[i].UploadID, name)
			if err != nil {
				return nil, unavailable("list uploads", err)
			}
			var vals []string
			for rs.Next() {
				var v string
				rs.Scan(&v)
				vals = append(vals, v)
			}
			rs.Close()
			if len(vals) > 0 {
				out[i].LabelValues[name] = strings.Join(vals, ", ")
			}
		}
	}
	return out, nil
}
