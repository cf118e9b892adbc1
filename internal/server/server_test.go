package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/storage"

	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/store"
)

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

type fixture struct {
	srv   *Server
	http  *httptest.Server
	token string
	st    *store.Store
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tokPath := filepath.Join(dir, "tokens")
	tok, err := NewToken(tokPath, "ci")
	if err != nil {
		t.Fatal(err)
	}
	toks, err := LoadTokens(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Store: st, Tokens: toks, MaxUpload: 64 << 10}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return &fixture{srv: s, http: hs, token: tok, st: st}
}

func (f *fixture) client() *storage.Client {
	return &storage.Client{BaseURL: f.http.URL, HTTPClient: &http.Client{Transport: bearer{f.token}}}
}

func night(machine, env string, n int, get float64) []byte {
	at := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC).AddDate(0, 0, n)
	var b strings.Builder
	fmt.Fprintf(&b, "machine-id: %s\nmachine: box-%s\ncpu: Test CPU\ngoos: linux\ngoarch: amd64\nenv-id: %s\ncommit: %040x\nrun-time: %s\npkg: example.com/m\n\n",
		machine, machine, env, n, at.Format(time.RFC3339))
	for f := 1; f <= 3; f++ {
		fmt.Fprintf(&b, "BenchmarkGet/impl=paged-2 1000 %g ns/op\n# benchctl: fork=%d iter=0\n", get*(1+0.001*float64(f)), f)
		fmt.Fprintf(&b, "BenchmarkPut-2 1000 %g ns/op\n# benchctl: fork=%d iter=0\n", 50*(1+0.001*float64(f)+0.002*float64(n%3)), f)
	}
	return []byte(b.String())
}

func upload(t *testing.T, c *storage.Client, name string, data []byte) *storage.UploadStatus {
	t.Helper()
	u := c.NewUpload(context.Background())
	w, err := u.CreateFile(name)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	st, err := u.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestPerfdataProtocolWithTheXPerfClient drives the server with
// golang.org/x/perf/storage's own client.
func TestPerfdataProtocolWithTheXPerfClient(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	data := night("m1", "e1", 0, 100)
	st := upload(t, c, "night0.txt", data)
	if want := payload.UploadID([]payload.File{{Name: "night0.txt", Data: data}}); st.UploadID != want || len(st.FileIDs) != 1 || st.FileIDs[0] != want+"/0" {
		t.Fatalf("upload status %+v, want ID %s", st, want)
	}
	if again := upload(t, c, "night0.txt", data); again.UploadID != st.UploadID {
		t.Errorf("re-upload got %s", again.UploadID)
	}
	upload(t, c, "night1.txt", night("m2", "e1", 1, 100))

	q := c.Query(context.Background(), "machine-id:m1 /impl:paged")
	n := 0
	for q.Next() {
		r := q.Result()
		if r.Labels["upload"] != st.UploadID || r.Labels["machine-id"] != "m1" || r.Labels["by"] != "ci" || !strings.HasPrefix(r.Content, "BenchmarkGet/impl=paged-2") {
			t.Errorf("result %+v", r)
		}
		n++
	}
	if err := q.Err(); err != nil || n != 3 {
		t.Errorf("query: %d results, %v; want 3", n, err)
	}
	q.Close()

	ul := c.ListUploads(context.Background(), "", []string{"machine-id"}, 10)
	var ids []string
	for ul.Next() {
		ids = append(ids, ul.Info().UploadID+"="+ul.Info().LabelValues["machine-id"])
	}
	if err := ul.Err(); err != nil || len(ids) != 2 || ids[1] != st.UploadID+"=m1" {
		t.Errorf("list uploads: %v, %v", ids, err)
	}
	bad := c.Query(context.Background(), "Machine:m1")
	for bad.Next() {
	}
	if err := bad.Err(); err == nil || !strings.Contains(err.Error(), "lower case") {
		t.Errorf("a bad query: %v", err)
	}
}

func post(t *testing.T, url, token string, body io.Reader, contentType string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/upload", body)
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func form(files map[string][]byte, fields ...string) (*bytes.Buffer, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for name, data := range files {
		w, _ := mw.CreateFormFile("file", name)
		w.Write(data)
	}
	for _, f := range fields {
		mw.WriteField(f, "1")
	}
	mw.Close()
	return &b, mw.FormDataContentType()
}

func uploads(t *testing.T, st *store.Store) int {
	q, _ := store.ParseQuery("")
	ups, err := st.ListUploads(context.Background(), q, nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(ups)
}

func TestBadUploadsAreRefusedAndStoreNothing(t *testing.T) {
	f := newFixture(t)
	good := night("m1", "e1", 0, 100)
	cases := []struct {
		name, token string
		files       map[string][]byte
		fields      []string
		code        int
		msg         string
	}{
		{"no token", "", map[string][]byte{"a.txt": good}, []string{"commit"}, 401, "needs a token"},
		{"unknown token", "lbt_nope", map[string][]byte{"a.txt": good}, []string{"commit"}, 401, "unknown token"},
		{"no machine-id", f.token, map[string][]byte{"a.txt": []byte("BenchmarkX 1 2 ns/op\n")}, []string{"commit"}, 400, "machine-id"},
		{"malformed", f.token, map[string][]byte{"a.txt": []byte("machine-id: m\nBenchmarkX 1 two ns/op\n")}, []string{"commit"}, 400, "invalid upload"},
		{"oversized", f.token, map[string][]byte{"a.txt": bytes.Repeat(good, 200)}, []string{"commit"}, 413, "limit of 65536 bytes"},
		{"aborted", f.token, map[string][]byte{"a.txt": good}, []string{"abort"}, 400, "aborted"},
		{"no commit", f.token, map[string][]byte{"a.txt": good}, nil, 400, "without its commit"},
		{"unknown field", f.token, map[string][]byte{"a.txt": good}, []string{"delete"}, 400, "unexpected field"},
	}
	for _, c := range cases {
		body, ct := form(c.files, c.fields...)
		code, msg := post(t, f.http.URL, c.token, body, ct)
		if code != c.code || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %d %q, want %d with %q", c.name, code, msg, c.code, c.msg)
		}
	}
	if code, msg := post(t, f.http.URL, f.token, strings.NewReader("x"), "text/plain"); code != 400 || !strings.Contains(msg, "multipart") {
		t.Errorf("not multipart: %d %s", code, msg)
	}
	// A body that breaks off mid-file, as when the client dies.
	body, ct := form(map[string][]byte{"a.txt": good}, "commit")
	cut := io.MultiReader(bytes.NewReader(body.Bytes()[:body.Len()/2]), errReader{})
	if code, _ := post(t, f.http.URL, f.token, cut, ct); code == 200 {
		t.Error("a cut-off body was accepted")
	}
	if n := uploads(t, f.st); n != 0 {
		t.Errorf("%d uploads stored from refused ones", n)
	}
	// The server still takes a good upload.
	body, ct = form(map[string][]byte{"a.txt": good}, "commit")
	if code, msg := post(t, f.http.URL, f.token, body, ct); code != 200 {
		t.Fatalf("good upload: %d %s", code, msg)
	}
	// Without a tokens file, no uploads at all.
	ro := httptest.NewServer((&Server{Store: f.st}).Handler())
	defer ro.Close()
	body, ct = form(map[string][]byte{"b.txt": good}, "commit")
	if code, msg := post(t, ro.URL, f.token, body, ct); code != 401 || !strings.Contains(msg, "without a tokens file") {
		t.Errorf("read-only server: %d %s", code, msg)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection lost") }

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestDashboardPagesAndAPI(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	for n := 0; n < 16; n++ {
		getNS := 100.0
		if n >= 11 {
			getNS = 125 // the planted regression on m1
		}
		upload(t, c, fmt.Sprintf("n%d.txt", n), night("m1", "e1", n, getNS))
		env := "e1"
		if n >= 8 {
			env = "e2"
		}
		upload(t, c, fmt.Sprintf("n%d.txt", n), night("m2", env, n, 100))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.srv.Run(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ms, _ := f.st.Machines(context.Background())
		pending := 0
		for _, m := range ms {
			xs, _ := f.st.MachineSeries(context.Background(), m.ID)
			for _, x := range xs {
				if x.Pending {
					pending++
				}
			}
		}
		if pending == 0 && len(ms) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("background analysis left %d series pending", pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, home := get(t, f.http.URL+"/")
	if code != 200 || !strings.Contains(home, `href="/machine/m1"`) || !strings.Contains(home, `href="/machine/m2"`) || !strings.Contains(home, "Test CPU") {
		t.Fatalf("home: %d\n%s", code, home)
	}
	code, m1 := get(t, f.http.URL+"/machine/m1")
	open := m1[strings.Index(m1, `id="open"`):strings.Index(m1, "Other change points")]
	if code != 200 || !strings.Contains(open, "BenchmarkGet/impl=paged-2") || !strings.Contains(open, "25.0 %") || strings.Contains(open, "BenchmarkPut") {
		t.Fatalf("machine m1: %d\n%s", code, m1)
	}
	_, m2 := get(t, f.http.URL+"/machine/m2")
	if !strings.Contains(m2, "Open regressions (0)") {
		t.Errorf("machine m2 lists regressions:\n%s", m2)
	}
	seriesURL := f.http.URL + "/series?machine=m1&benchmark=BenchmarkGet%2Fimpl%3Dpaged-2&unit=sec%2Fop"
	code, ser := get(t, seriesURL)
	if code != 200 || !strings.Contains(ser, `src="/chart.svg?`) || strings.Count(ser, "<tr") < 17 || !strings.Contains(ser, "open regression") {
		t.Fatalf("series: %d\n%s", code, ser)
	}
	code, svg := get(t, strings.Replace(seriesURL, "/series?", "/chart.svg?", 1))
	if code != 200 || !strings.Contains(svg, "<svg") {
		t.Errorf("chart: %d %.200s", code, svg)
	}
	code, js := get(t, strings.Replace(seriesURL, "/series?", "/api/series?", 1))
	if code != 200 || !strings.Contains(js, `"open": true`) || strings.Count(js, `"value"`) != 16 {
		t.Errorf("api series: %d %s", code, js)
	}
	code, across := get(t, f.http.URL+"/across?benchmark=BenchmarkGet%2Fimpl%3Dpaged-2")
	if code != 200 || !strings.Contains(across, `href="/machine/m1"`) || !strings.Contains(across, `href="/machine/m2"`) {
		t.Errorf("across: %d\n%s", code, across)
	}
	for _, u := range []string{"/machine/nope", "/series?machine=m1&benchmark=BenchmarkNope", "/raw/nope/0", "/upload/nope"} {
		if code, _ := get(t, f.http.URL+u); code != 404 {
			t.Errorf("%s: %d, want 404", u, code)
		}
	}
	for _, u := range []string{"/series?machine=m1", "/search?q=Bad:x", "/search", "/uploads?limit=-1", "/api/changepoints"} {
		if code, _ := get(t, f.http.URL+u); code != 400 {
			t.Errorf("%s: %d, want 400", u, code)
		}
	}
}

func TestABUploadShowsThePullRequestTable(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	b.WriteString("machine-id: m1\npkg: example.com/m\nbaseline-commit: aaaaaaaaaaaaaaaa\nexperiment-commit: bbbbbbbbbbbbbbbb\n")
	for _, side := range []struct {
		tc string
		ns float64
	}{{"baseline", 100}, {"experiment", 80}} {
		fmt.Fprintf(&b, "toolchain: %s\n", side.tc)
		for i := 1; i <= 6; i++ {
			fmt.Fprintf(&b, "BenchmarkGet-2 1000 %g ns/op\n# benchctl: fork=%d iter=0\n", side.ns+float64(i)/10, i)
		}
	}
	st := upload(t, f.client(), "ab.txt", []byte(b.String()))
	code, page := get(t, f.http.URL+"/upload/"+st.UploadID)
	table := page[strings.Index(page, `<div id="ab">`):]
	table = table[:strings.Index(table, "</div>")]
	if code != 200 || !strings.Contains(table, `<table class="ab">`) || !strings.Contains(table, "baseline (aaaaaaaaaaaa)") || !strings.Contains(table, "-19.9 %") ||
		strings.Contains(table, "```") || !strings.Contains(table, "<b>sec/op</b>") {
		t.Fatalf("A/B page: %d\n%s", code, page)
	}
	if _, home := get(t, f.http.URL+"/"); !strings.Contains(home, "<td>A/B</td>") || !strings.Contains(home, "<code>bbbbbbbbbb</code>") {
		t.Errorf("the home page does not show the upload as an A/B of the experiment's commit:\n%s", home)
	}
}

func TestUnavailableStoreIs503AndTheServerStaysUp(t *testing.T) {
	f := newFixture(t)
	f.st.Close()
	body, ct := form(map[string][]byte{"a.txt": night("m1", "e1", 0, 100)}, "commit")
	if code, msg := post(t, f.http.URL, f.token, body, ct); code != 503 || !strings.Contains(msg, "store unavailable") {
		t.Errorf("upload to a closed store: %d %s", code, msg)
	}
	if code, _ := get(t, f.http.URL+"/"); code != 503 {
		t.Errorf("home on a closed store: %d", code)
	}
	if code, _ := get(t, f.http.URL+"/healthz"); code != 200 {
		t.Errorf("healthz: %d", code)
	}
}

func TestTokensFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tokens")
	a, err := NewToken(p, "alice")
	if err != nil {
		t.Fatal(err)
	}
	toks, err := LoadTokens(p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewToken(p, "bob") // made while the server runs
	if name, ok := toks.Check(a); !ok || name != "alice" {
		t.Errorf("alice: %q %v", name, ok)
	}
	if name, ok := toks.Check(b); !ok || name != "bob" {
		t.Errorf("bob, made after loading: %q %v", name, ok)
	}
	if _, ok := toks.Check(a + "x"); ok {
		t.Error("a wrong token passed")
	}
	data, _ := readFile(p)
	if strings.Contains(data, a) || strings.Contains(data, b) {
		t.Error("the tokens file holds a token itself")
	}
	if _, err := NewToken(p, "two words"); err == nil {
		t.Error("a name with a space was accepted")
	}
	if _, err := LoadTokens(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "token new") {
		t.Errorf("missing tokens file: %v", err)
	}
}

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}
