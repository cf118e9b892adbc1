package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
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
	where, args := q.where(s.dialect)
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
	err = s.db.QueryRowContext(ctx, s.q(`SELECT f.name, COALESCE(o.contents, f.contents) FROM files f JOIN uploads u ON u.id = f.upload
		LEFT JOIN files o ON o.id = f.same_as WHERE u.upload_id = ? AND f.part = ?`),
		uploadID, part).Scan(&name, &z)
	if err != nil {
		return "", nil, notFound(err, "upload %s/%d", uploadID, part)
	}
	data, err = inflate(z)
	return name, data, err
}

// Parts is how many files upload uploadID holds.
func (s *Store) Parts(ctx context.Context, uploadID string) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT files FROM uploads WHERE upload_id = ?`), uploadID).Scan(&n); err != nil {
		return 0, notFound(err, "upload %s", uploadID)
	}
	return n, nil
}

func (s *Store) contentsOf(ctx context.Context, fid int64) ([]byte, error) {
	var z []byte
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT COALESCE(o.contents, f.contents) FROM files f LEFT JOIN files o ON o.id = f.same_as WHERE f.id = ?`), fid).Scan(&z); err != nil {
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
// in byte order joined by ", ", at most MaxLabelValues).
type UploadInfo struct {
	Count       int
	UploadID    string
	LabelValues map[string]string `json:",omitempty"`
}

// Bounds of a ListUploads request.
const (
	MaxListUploads = 1000 // uploads listed at once
	MaxExtraLabels = 32   // extra labels asked of each
	MaxLabelValues = 8    // values listed of each label, the first in byte order
)

// ListUploads lists the uploads holding a result that matches q, newest
// first, at most limit of them (1 to MaxListUploads), with the values of
// up to MaxExtraLabels extra labels each (MaxLabelValues a label at most).
func (s *Store) ListUploads(ctx context.Context, q *Query, extraLabels []string, limit int) ([]UploadInfo, error) {
	if len(extraLabels) > MaxExtraLabels {
		return nil, fmt.Errorf("%w: %d extra_label values: at most %d", ErrQuery, len(extraLabels), MaxExtraLabels)
	}
	if limit <= 0 || limit > MaxListUploads {
		return nil, fmt.Errorf("%w: limit %d: want 1 to %d", ErrQuery, limit, MaxListUploads)
	}
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
	labels := slices.Compact(slices.Sorted(slices.Values(extraLabels)))
	if len(labels) == 0 || len(out) == 0 {
		return out, nil
	}
	query := uploadLabelsQuery
	if s.schema < 11 {
		query = fileLabelsQuery
	}
	if err := s.labelValues(ctx, query, out, labels); err != nil {
		return nil, err
	}
	return out, nil
}

// The queries of the listed uploads' values of some labels: from each
// upload's first values of its labels, kept as it is stored (schema
// 11), or from its files' labels. The second reads every file's labels:
// 13 ms of the home page for a 1,000-file upload among the latest
// twenty. It finds the uploads' files first: joined from the labels'
// side, SQLite walked every file's label of each name.
const (
	uploadLabelsQuery = `SELECT u.upload_id, l.name, l.value FROM upload_labels l JOIN uploads u ON u.id = l.upload
		WHERE u.upload_id IN ({{uploads}}) AND l.name IN ({{labels}})`
	fileLabelsQuery = `SELECT DISTINCT u.upload_id, l.name, l.value FROM file_labels l JOIN files f ON f.id = l.file JOIN uploads u ON u.id = f.upload
		WHERE l.file IN (SELECT f2.id FROM files f2 JOIN uploads u2 ON u2.id = f2.upload WHERE u2.upload_id IN ({{uploads}}))
		AND l.name IN ({{labels}})`
)

// labelValues sets the listed uploads' values of labels, read by query
// (MaxLabelValues a label at most, the first in byte order).
func (s *Store) labelValues(ctx context.Context, query string, out []UploadInfo, labels []string) error {
	ids := make([]any, 0, len(out)+len(labels))
	where := map[string]int{}
	for i := range out {
		out[i].LabelValues = map[string]string{}
		ids = append(ids, out[i].UploadID)
		where[out[i].UploadID] = i
	}
	for _, l := range labels {
		ids = append(ids, l)
	}
	marks := func(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }
	query = strings.NewReplacer("{{uploads}}", marks(len(out)), "{{labels}}", marks(len(labels))).Replace(query)
	rs, err := s.db.QueryContext(ctx, s.q(query), ids...)
	if err != nil {
		return unavailable("list uploads", err)
	}
	defer rs.Close()
	vals := make([]map[string][]string, len(out))
	for rs.Next() {
		var id, name, v string
		if err := rs.Scan(&id, &name, &v); err != nil {
			return unavailable("list uploads", err)
		}
		i := where[id]
		if vals[i] == nil {
			vals[i] = map[string][]string{}
		}
		vals[i][name] = append(vals[i][name], v)
	}
	if err := rs.Err(); err != nil {
		return unavailable("list uploads", err)
	}
	for i, vs := range vals {
		for name, v := range vs {
			out[i].LabelValues[name] = strings.Join(firstValues(v), ", ")
		}
	}
	return nil
}

// firstValues sorts vs in byte order (PostgreSQL's ORDER BY follows the
// database's collation) and keeps the first MaxLabelValues.
func firstValues(vs []string) []string {
	slices.Sort(vs)
	vs = slices.Compact(vs)
	return vs[:min(len(vs), MaxLabelValues)]
}
