package store

import (
	"context"
	"database/sql"
	"math"
	"strconv"

	"github.com/ledgerbench/ledgerbench/internal/payload"
)

// Bisection is what a benchctl bisect of one regression found, as
// nightly --bisect uploads it: a file whose configuration carries
// payload.KeyBisectBad (and payload's other bisect keys) is recorded as a
// bisection of its machine's regression from Good to Bad, not counted as
// a run.
type Bisection struct {
	Machine   string `json:"machine"`
	Benchmark string `json:"benchmark"`
	Unit      string `json:"unit"`
	Good      string `json:"good"`
	Bad       string `json:"bad"`
	// Culprit is the commit found ("" when none was decided), Subject
	// its subject line, Own its change against its parent (with its
	// interval) and Share the part of the whole change it explains (NaN
	// when not measured).
	Culprit string  `json:"culprit"`
	Subject string  `json:"subject"`
	Own     string  `json:"own"`
	Share   float64 `json:"share"`
	// Upload and Part name the stored file: its report and raw A/B.
	Upload string `json:"upload"`
	Part   int    `json:"part"`
}

// bisectionOf reads a file's bisection keys: ok when it is one.
func bisectionOf(p parsed) (Bisection, bool) {
	get := func(k string) string {
		for kv := range p.labels {
			if kv[0] == k {
				return kv[1]
			}
		}
		return ""
	}
	b := Bisection{Machine: p.machine, Benchmark: get(payload.KeyBisectBenchmark), Unit: get(payload.KeyBisectUnit),
		Good: get(payload.KeyBisectGood), Bad: get(payload.KeyBisectBad), Culprit: get(payload.KeyBisectCulprit),
		Subject: get(payload.KeyBisectSubject), Own: get(payload.KeyBisectOwn), Share: math.NaN()}
	if v, err := strconv.ParseFloat(get(payload.KeyBisectShare), 64); err == nil {
		b.Share = v
	}
	return b, b.Bad != ""
}

func (s *Store) insertBisection(ctx context.Context, tx *sql.Tx, fid int64, b Bisection) error {
	var share sql.NullFloat64
	if !math.IsNaN(b.Share) && !math.IsInf(b.Share, 0) {
		share = sql.NullFloat64{Float64: b.Share, Valid: true}
	}
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO bisections (file, machine_id, benchmark, unit, good, bad, culprit, subject, own, share)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), fid, b.Machine, b.Benchmark, b.Unit, b.Good, b.Bad, b.Culprit, b.Subject, b.Own, share)
	return err
}

// Bisections lists a machine's bisections, newest first.
func (s *Store) Bisections(ctx context.Context, machine string) ([]Bisection, error) {
	rs, err := s.db.QueryContext(ctx, s.q(`SELECT b.machine_id, b.benchmark, b.unit, b.good, b.bad, b.culprit, b.subject, b.own, b.share, f.upload_key, f.part
		FROM bisections b JOIN files f ON f.id = b.file WHERE b.machine_id = ? ORDER BY b.file DESC`), machine)
	if err != nil {
		return nil, unavailable("bisections", err)
	}
	defer rs.Close()
	out := []Bisection{}
	for rs.Next() {
		var b Bisection
		var share sql.NullFloat64
		if err := rs.Scan(&b.Machine, &b.Benchmark, &b.Unit, &b.Good, &b.Bad, &b.Culprit, &b.Subject, &b.Own, &share, &b.Upload, &b.Part); err != nil {
			return nil, unavailable("bisections", err)
		}
		b.Share = math.NaN()
		if share.Valid {
			b.Share = share.Float64
		}
		out = append(out, b)
	}
	return out, unavailable("bisections", rs.Err())
}
