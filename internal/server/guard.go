package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Timeouts of a request, beyond the listener's limit on connections
// (ConnLimit) and the http.Server's on headers and idle connections.
const (
	// DefaultReadTimeout bounds the time to read a request's body,
	// from its headers: what an anonymous client may hold.
	DefaultReadTimeout = 30 * time.Second
	// DefaultUploadTimeout bounds the time to read an authenticated
	// upload's body.
	DefaultUploadTimeout = 10 * time.Minute
	// DefaultWriteTimeout bounds the time to write an answer.
	DefaultWriteTimeout = 2 * time.Minute
	// DefaultQueryTimeout bounds the store's work for one request: its
	// queries are cancelled (SQLite interrupted, PostgreSQL's statement
	// cancelled) when it is spent, and the answer is a 503.
	DefaultQueryTimeout = time.Minute
)

// contentSecurity is every answer's Content-Security-Policy: the pages
// have no script, style only inline, and images (the charts) from here;
// a chart opened alone runs nothing either.
const contentSecurity = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// guard sets every request's deadlines and every answer's security
// headers.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		now := time.Now()
		// Errors here mean a ResponseWriter without deadlines (a test's
		// recorder): there is no connection to bound.
		_ = rc.SetReadDeadline(now.Add(orDefault(s.ReadTimeout, DefaultReadTimeout)))
		_ = rc.SetWriteDeadline(now.Add(orDefault(s.WriteTimeout, DefaultWriteTimeout)))
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentSecurity)
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		if !isUpload(r) {
			// An upload's store work is bounded from the end of its
			// body, which may take UploadTimeout to arrive.
			ctx, cancel := context.WithTimeout(r.Context(), orDefault(s.QueryTimeout, DefaultQueryTimeout))
			defer cancel()
			r = r.WithContext(ctx)
			if r.URL.Path != "/healthz" {
				select {
				case s.reads <- struct{}{}:
					defer func() { <-s.reads }()
				case <-ctx.Done():
					s.fail(w, r, fmt.Errorf("waiting for a turn among %d reads at once: %w", cap(s.reads), ctx.Err()))
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

func isUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/upload"
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// healthz answers ok only when the store answers a query and, for a
// SQLite store, its file is still the one it opened.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := s.Store.Check(ctx); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "ok\n")
}
