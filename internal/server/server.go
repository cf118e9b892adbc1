package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/store"
)

// DefaultMaxUpload is the default limit of an upload's body.
const DefaultMaxUpload = payload.MaxUpload

// Server serves a store.
type Server struct {
	Store     *store.Store
	Tokens    *Tokens // nil: no uploads
	MaxUpload int64   // bytes of an upload's body (DefaultMaxUpload when 0)
	Log       *log.Logger
	// ReadTimeout, UploadTimeout and WriteTimeout bound each request
	// (the Default… values when 0).
	ReadTimeout, UploadTimeout, WriteTimeout time.Duration
	// QueryTimeout bounds the store's work for one request: a page's or
	// the API's queries from the request's start, an upload's writes
	// from the end of its body (DefaultQueryTimeout when 0).
	QueryTimeout time.Duration
	// AnalyzeRetry is how long Run waits before it analyzes again a
	// machine whose analysis failed (DefaultAnalyzeRetry when 0).
	AnalyzeRetry time.Duration
	// PublicURL is the server's address as its readers reach it
	// ("https://bench.example.com"), from which an upload's answer
	// builds its page's URL; without it, from the request's Host header,
	// which the client chose.
	PublicURL string
	// MaxReads is how many reads (pages, the API, searches; not
	// /healthz, not uploads) the store serves at once; the others wait
	// their turn within their time limit. Readers beyond the CPUs only
	// take CPU from the writer, who then holds SQLite's one write lock
	// the longer: beside 20 readers, a 1,000-file upload held it 8.5-10 s
	// with no bound, 4.4 s with 2 × GOMAXPROCS reads, 1.9 s with
	// GOMAXPROCS (the default, when 0).
	MaxReads int

	analyze func(ctx context.Context, machine string) (int, error) // Store.Analyze; a test's failure
	mu      sync.Mutex
	pending map[string]bool // machines to analyze
	kick    chan struct{}   // made by Handler; an upload signals Run
	reads   chan struct{}   // made by Handler: a slot for each read served at once
}

// Handler returns the server's routes.
func (s *Server) Handler() http.Handler {
	if s.MaxUpload == 0 {
		s.MaxUpload = DefaultMaxUpload
	}
	if s.Log == nil {
		s.Log = log.New(io.Discard, "", 0)
	}
	if s.kick == nil {
		s.kick = make(chan struct{}, 1)
	}
	if s.reads == nil {
		s.reads = make(chan struct{}, cmp.Or(s.MaxReads, runtime.GOMAXPROCS(0)))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /upload", s.upload)
	mux.HandleFunc("GET /search", s.search)
	mux.HandleFunc("GET /uploads", s.uploads)
	mux.HandleFunc("GET /api/machines", s.apiMachines)
	mux.HandleFunc("GET /api/series", s.apiSeries)
	mux.HandleFunc("GET /api/changepoints", s.apiChangePoints)
	mux.HandleFunc("GET /api/across", s.apiAcross)
	mux.HandleFunc("GET /raw/{upload}/{part}", s.raw)
	mux.HandleFunc("GET /healthz", s.healthz)
	s.pages(mux)
	return s.guard(mux)
}

// Run analyzes uploaded machines' series in the background until ctx
// ends; call it after Handler. Without it, series stay pending until
// Analyze is called.
func (s *Server) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		}
		s.mu.Lock()
		machines := s.pending
		s.pending = nil
		s.mu.Unlock()
		analyze := s.analyze
		if analyze == nil {
			analyze = s.Store.Analyze
		}
		for m := range machines {
			n, err := analyze(ctx, m)
			if err != nil {
				// A full disk or a database restart passes: the
				// machine's series stay pending until analyzed.
				wait := orDefault(s.AnalyzeRetry, DefaultAnalyzeRetry)
				s.Log.Printf("analyze %s: %v; again in %s", m, err, wait)
				time.AfterFunc(wait, func() {
					if ctx.Err() == nil {
						s.analyzeLater([]string{m})
					}
				})
				continue
			}
			s.Log.Printf("analyzed %d series of %s", n, m)
		}
	}
}

// DefaultAnalyzeRetry is the wait before a failed analysis is tried again.
const DefaultAnalyzeRetry = 30 * time.Second

func (s *Server) analyzeLater(machines []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[string]bool{}
	}
	for _, m := range machines {
		s.pending[m] = true
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// fail writes err as a status and a one-line message.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		code = http.StatusRequestEntityTooLarge
		err = fmt.Errorf("upload over this server's limit of %d bytes", mbe.Limit)
	case errors.Is(err, store.ErrInvalid), errors.Is(err, store.ErrQuery), errors.Is(err, errBadRequest):
		code = http.StatusBadRequest
	case errors.Is(err, store.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, errUnauthorized):
		code = http.StatusUnauthorized
	case errors.Is(err, store.ErrForbidden):
		code = http.StatusForbidden
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, errUnavailable):
		code = http.StatusServiceUnavailable
	case r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		// The request's time limit cut its queries (a driver may say
		// "canceled" for it): try again, or ask for less.
		code = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "10")
		err = fmt.Errorf("the request's queries ran past this server's time limit (%v): try again later, or ask for less", err)
	}
	s.Log.Printf("%s %s: %d %v", r.Method, r.URL.Path, code, err)
	msg := err.Error()
	if errors.Is(err, store.ErrUnavailable) {
		// The database's own words name its user, host and port: they
		// are for the server's log, not for anonymous readers.
		msg = "store unavailable: nothing was stored; try again later"
	}
	if r.Method == http.MethodPost {
		// A refused upload's unread body is not waited for.
		w.Header().Set("Connection", "close")
	}
	http.Error(w, msg, code)
}

var (
	errBadRequest   = errors.New("bad request")
	errUnauthorized = errors.New("unauthorized")
	errUnavailable  = errors.New("unavailable")
)

// user authenticates an upload: its token's name and the machines it is
// bound to.
func (s *Server) user(r *http.Request) (TokenInfo, error) {
	if s.Tokens == nil {
		return TokenInfo{}, fmt.Errorf("%w: this server accepts no uploads (it was started without a tokens file)", errUnauthorized)
	}
	// The scheme is case-insensitive (RFC 9110, section 11.1).
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "Bearer") {
		return TokenInfo{}, fmt.Errorf("%w: an upload needs a token: Authorization: Bearer TOKEN (benchctl sends $%s)", errUnauthorized, payload.TokenEnv)
	}
	info, err := s.Tokens.Lookup(f[1])
	switch {
	case errors.Is(err, ErrUnknownToken):
		return TokenInfo{}, fmt.Errorf("%w: unknown token", errUnauthorized)
	case err != nil:
		// Failing closed: the detail is in the server's log only.
		s.Log.Printf("checking a token: %v", err)
		return TokenInfo{}, fmt.Errorf("%w: this server cannot read its tokens file: it accepts no uploads until it is repaired", errUnavailable)
	}
	return info, nil
}

// upload is perfdata's POST /upload: a multipart form of "file" parts
// and a final "commit" field (an "abort" field aborts).
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	user, err := s.user(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rc, upTime := http.NewResponseController(w), orDefault(s.UploadTimeout, DefaultUploadTimeout)
	_ = rc.SetReadDeadline(time.Now().Add(upTime))
	_ = rc.SetWriteDeadline(time.Now().Add(upTime + orDefault(s.WriteTimeout, DefaultWriteTimeout)))
	r.Body = http.MaxBytesReader(w, r.Body, s.MaxUpload)
	files, err := readUpload(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), orDefault(s.QueryTimeout, DefaultQueryTimeout))
	defer cancel()
	up, err := s.Store.Put(ctx, files, user.Name, user.Machines...)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !up.Existing {
		s.analyzeLater(up.Machines)
	}
	s.Log.Printf("upload %s by %s: %d files, %d results, existing=%v", up.ID, user.Name, len(files), up.Results, up.Existing)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"uploadid": up.ID, "fileids": up.FileIDs, "viewurl": s.viewURL(r, up.ID), "existing": up.Existing, "results": up.Results,
		"warnings": nonNil(up.Warnings)})
}

// nonNil is xs, or an empty list where JSON would say null.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// viewURL is the upload's page, absolute as perfdata clients expect: on
// PublicURL when set, else on the request's own Host.
func (s *Server) viewURL(r *http.Request, id string) string {
	if s.PublicURL != "" {
		return strings.TrimRight(s.PublicURL, "/") + "/upload/" + id
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/upload/" + id
}

func readUpload(r *http.Request) ([]payload.File, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, fmt.Errorf("%w: an upload is multipart/form-data with file parts and a commit field", errBadRequest)
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var files []payload.File
	committed := false
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readErr(err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, readErr(err)
		}
		switch name := p.FormName(); name {
		case "file":
			files = append(files, payload.File{Name: p.FileName(), Data: data})
		case "commit":
			committed = true
		case "abort":
			return nil, fmt.Errorf("%w: the client aborted the upload; nothing was stored", errBadRequest)
		default:
			return nil, fmt.Errorf("%w: unexpected field %q", errBadRequest, name)
		}
	}
	if !committed {
		return nil, fmt.Errorf("%w: the upload ended without its commit field; nothing was stored", errBadRequest)
	}
	return files, nil
}

func readErr(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return fmt.Errorf("%w: reading the upload: %v; nothing was stored", errBadRequest, err)
}

// search is perfdata's GET /search?q=QUERY: the matching results as a
// benchfmt file.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q, err := store.ParseQuery(r.FormValue("q"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if r.FormValue("q") == "" {
		s.fail(w, r, fmt.Errorf("%w: missing q parameter", errBadRequest))
		return
	}
	// The results are buffered until the first is written, so an error
	// before it is still a status.
	var bw *benchfmt.Writer
	err = s.Store.Search(r.Context(), q, func(res *benchfmt.Result) error {
		if bw == nil {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			bw = benchfmt.NewWriter(w)
		}
		return bw.Write(res)
	})
	if err != nil {
		if bw == nil {
			s.fail(w, r, err)
			return
		}
		s.Log.Printf("search %q failed mid-answer: %v", q, err)
		fmt.Fprintf(w, "\n# search failed here: %v\n", err)
		return
	}
	if bw == nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
}

// uploads is perfdata's GET /uploads?q=&extra_label=&limit=: one JSON
// object per matching upload, newest first.
func (s *Server) uploads(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	q, err := store.ParseQuery(r.Form.Get("q"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit := 1000
	if l := r.Form.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit <= 0 {
			s.fail(w, r, fmt.Errorf("%w: limit %q: want a positive number", errBadRequest, l))
			return
		}
	}
	ups, err := s.Store.ListUploads(r.Context(), q, r.Form["extra_label"], limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	for _, u := range ups {
		enc.Encode(u)
	}
}

func (s *Server) raw(w http.ResponseWriter, r *http.Request) {
	part, err := strconv.Atoi(r.PathValue("part"))
	if err != nil {
		s.fail(w, r, fmt.Errorf("%w: part %q", errBadRequest, r.PathValue("part")))
		return
	}
	name, data, err := s.Store.Contents(r.Context(), r.PathValue("upload"), part)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": name}))
	w.Write(data)
}

func (s *Server) seriesKey(r *http.Request) (store.SeriesKey, error) {
	k := store.SeriesKey{Machine: r.FormValue("machine"), Pkg: r.FormValue("pkg"), Benchmark: r.FormValue("benchmark"), Unit: r.FormValue("unit")}
	if k.Unit == "" {
		k.Unit = "sec/op"
	}
	if k.Machine == "" || k.Benchmark == "" {
		return k, fmt.Errorf("%w: want machine=ID&benchmark=NAME (and pkg=, unit=)", errBadRequest)
	}
	return k, nil
}

func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// The JSON API's names are camelCase and its lists are [] when empty,
// never null. (/uploads keeps perfdata's names: its clients decode them.)

func (s *Server) apiMachines(w http.ResponseWriter, r *http.Request) {
	ms, err := s.Store.Machines(r.Context())
	s.writeJSON(w, r, nonNil(ms), err)
}

func (s *Server) apiSeries(w http.ResponseWriter, r *http.Request) {
	if ser, ok := s.readSeries(w, r); ok {
		ser.Points, ser.ChangePoints = nonNil(ser.Points), nonNil(ser.ChangePoints)
		s.writeJSON(w, r, ser, nil)
	}
}

func (s *Server) apiChangePoints(w http.ResponseWriter, r *http.Request) {
	m := r.FormValue("machine")
	if m == "" {
		s.fail(w, r, fmt.Errorf("%w: want machine=ID", errBadRequest))
		return
	}
	cps, err := s.Store.Regressions(r.Context(), m, 0)
	s.writeJSON(w, r, nonNil(cps), err)
}

func (s *Server) apiAcross(w http.ResponseWriter, r *http.Request) {
	b, unit := r.FormValue("benchmark"), r.FormValue("unit")
	if b == "" {
		s.fail(w, r, fmt.Errorf("%w: want benchmark=NAME (and pkg=, unit=)", errBadRequest))
		return
	}
	if unit == "" {
		unit = "sec/op"
	}
	xs, err := s.Store.Across(r.Context(), r.FormValue("pkg"), b, unit)
	s.writeJSON(w, r, nonNil(xs), err)
}

// CheckPublicURL refuses a public URL that is not an absolute http or
// https address without a query or fragment.
func CheckPublicURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: want an absolute http:// or https:// address without credentials, query or fragment", raw)
	}
	return nil
}
