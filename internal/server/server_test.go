package server

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
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
	srv     *Server
	http    *httptest.Server
	token   string
	st      *store.Store
	dbPath  string
	tokPath string
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
	return &fixture{srv: s, http: hs, token: tok, st: st, dbPath: filepath.Join(dir, "r.db"), tokPath: tokPath}
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
		// Content PostgreSQL cannot store is refused on every back end,
		// before anything is stored, as are values the series cannot
		// hold and names that would weigh on every page.
		{"NUL byte", f.token, map[string][]byte{"a.txt": append(append([]byte{}, good...), 0)}, []string{"commit"}, 400, "NUL byte"},
		{"invalid UTF-8", f.token, map[string][]byte{"a.txt": append(append([]byte{}, good...), "# \xff\xfe\n"...)}, []string{"commit"}, 400, "not valid UTF-8"},
		{"long file name", f.token, map[string][]byte{strings.Repeat("n", 300) + ".txt": good}, []string{"commit"}, 400, "file name of 304 bytes"},
		{"control in file name", f.token, map[string][]byte{"a\u0085.txt": good}, []string{"commit"}, 400, "without control characters"},
		{"bidi control in file name", f.token, map[string][]byte{"bench\u202etxt.exe": good}, []string{"commit"}, 400, "bidirectional control"},
		{"bidi control in benchmark name", f.token, map[string][]byte{"a.txt": []byte("machine-id: m\nBenchmarkX\u2067Y 1 2 ns/op\n")}, []string{"commit"}, 400, "bidirectional control"},
		{"long benchmark name", f.token, map[string][]byte{"a.txt": []byte("machine-id: m\nBenchmark" + strings.Repeat("X", 1100) + " 1 2 ns/op\n")}, []string{"commit"}, 400, "benchmark name of"},
		{"NaN", f.token, map[string][]byte{"a.txt": []byte("machine-id: m\nBenchmarkX 1 NaN ns/op\n")}, []string{"commit"}, 400, "NaN ns/op: a time or throughput is a positive number"},
		{"+Inf", f.token, map[string][]byte{"a.txt": []byte("machine-id: m\nBenchmarkX 1 +Inf ns/op\n")}, []string{"commit"}, 400, "a time or throughput is a positive number"},
		{"zero", f.token, map[string][]byte{"a.txt": []byte("machine-id: m\nBenchmarkX 1 0 ns/op\n")}, []string{"commit"}, 400, "0 ns/op: a time"},
		{"negative", f.token, map[string][]byte{"a.txt": []byte("machine-id: m\nBenchmarkX 1 -5 ns/op\n")}, []string{"commit"}, 400, "-5 ns/op: a time"},
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
	// Beside it, the command that finds its commit (html-escaped quotes).
	if !regexp.MustCompile(`benchctl bisect --good [0-9a-f]{1,12} --bad [0-9a-f]{1,12} --bench &#39;\^BenchmarkGet/impl=paged\$&#39;`).MatchString(open) {
		t.Errorf("machine m1: no bisect command for the open regression:\n%s", open)
	}
	// A bisection uploaded by nightly --bisect: shown on the row of the
	// regression it bisected instead of the command, and no run.
	cps, err := f.st.Regressions(context.Background(), "m1", 0)
	if err != nil || len(cps) == 0 || !cps[0].Open {
		t.Fatalf("regressions of m1: %+v, %v", cps, err)
	}
	// The row's small chart: the 16 runs, each a dot whose tooltip names
	// its commit, the 5 from the shift on in red after its mark.
	spark := regexp.MustCompile(`<svg class="spark"[^>]*>.*?</svg>`).FindString(open)
	after := regexp.MustCompile(`<polyline fill="none" stroke="#c82828" stroke-width="1.5" points="([^"]*)"/>`).FindStringSubmatch(spark)
	if !strings.Contains(open, "5 runs since") || strings.Count(spark, "<circle") != 16 || after == nil || len(strings.Fields(after[1])) != 5 ||
		!strings.Contains(spark, "<title>"+shortCommit(cps[0].After.Commit)+" · "+runDate(cps[0].After.At)+" · 125.2n sec/op</title>") {
		t.Errorf("machine m1: the open regression's chart and runs since:\n%s", open)
	}
	culprit := "c0ffee" + fmt.Sprintf("%034x", 11)
	bis := fmt.Sprintf("machine-id: m1\nbisect-benchmark: %s\nbisect-unit: sec/op\nbisect-good: %s\nbisect-bad: %s\nbisect-culprit: %s\nbisect-subject: commit 11: a slower Get\nbisect-own: +25.00 %% [+24.10, +25.90]\nbisect-share: 0.98\nbisect-functions: cache.(*Pages).Get +31.2ns/op [+29.0ns/op, +33.4ns/op] (98 %% of the change)\n"+
		"# ## Culprit: %s \"commit 11: a slower Get\"\nBenchmarkGet/impl=paged-2 1000 125 ns/op\n", cps[0].Benchmark, cps[0].Before.Commit, cps[0].After.Commit, culprit, culprit[:12])
	st := upload(t, c, "bisect.txt", []byte(bis))
	_, m1 = get(t, f.http.URL+"/machine/m1")
	open = m1[strings.Index(m1, `id="open"`):strings.Index(m1, "Other change points")]
	if !strings.Contains(open, "culprit <code>"+culprit[:10]+"</code> commit 11: a slower Get") || !strings.Contains(open, "&#43;25.00 % [&#43;24.10, &#43;25.90] against its parent, 98 % of the change") ||
		!strings.Contains(open, `href="/raw/`+st.UploadID+`/0">bisect report`) || strings.Contains(open, "benchctl bisect --good") ||
		!strings.Contains(open, "functions: cache.(*Pages).Get &#43;31.2ns/op [&#43;29.0ns/op, &#43;33.4ns/op] (98 % of the change)") {
		t.Errorf("machine m1 after its bisection was uploaded:\n%s", open)
	}
	if code, raw := get(t, f.http.URL+"/raw/"+st.UploadID+"/0"); code != 200 || !strings.Contains(raw, "# ## Culprit: "+culprit[:12]) {
		t.Errorf("the bisection's report: %d\n%s", code, raw)
	}
	// A newer bisection of the same regression is the one shown; 100
	// bisections of other regressions in one upload change nothing.
	newer := "beef00" + fmt.Sprintf("%034x", 12)
	upload(t, c, "bisect2.txt", []byte(strings.ReplaceAll(strings.ReplaceAll(bis, culprit, newer), culprit[:12], newer[:12])))
	others := map[string][]byte{}
	for i := range 100 {
		others[fmt.Sprintf("other%03d.txt", i)] = fmt.Appendf(nil, "machine-id: m1\nbisect-benchmark: BenchmarkOther%d\nbisect-unit: sec/op\nbisect-good: %040x\nbisect-bad: %040x\nbisect-culprit: %040x\nBenchmarkOther%d 10 100 ns/op\n", i, 1, 2, 3, i)
	}
	body, ct := form(others, "commit")
	if code, msg := post(t, f.http.URL, f.token, body, ct); code != 200 {
		t.Fatalf("100 bisections of m1: %d %s", code, msg)
	}
	_, m1 = get(t, f.http.URL+"/machine/m1")
	open = m1[strings.Index(m1, `id="open"`):strings.Index(m1, "Other change points")]
	if !strings.Contains(open, "culprit <code>"+newer[:10]+"</code>") || strings.Contains(open, culprit[:10]) {
		t.Errorf("machine m1 after a newer bisection of its regression:\n%s", open)
	}
	if ms, _ := f.st.Machines(context.Background()); len(ms) != 2 || ms[0].Runs != 16 || ms[1].Runs != 16 {
		t.Errorf("a bisection counted as a run: %+v", ms)
	}
	if code, js := get(t, strings.Replace(f.http.URL+"/series?machine=m1&benchmark=BenchmarkGet%2Fimpl%3Dpaged-2&unit=sec%2Fop", "/series?", "/api/series?", 1)); code != 200 || strings.Count(js, `"value"`) != 16 {
		t.Errorf("a bisection's A/B added points to the series: %d %s", code, js)
	}
	_, m2 := get(t, f.http.URL+"/machine/m2")
	if !strings.Contains(m2, "Open regressions (0)") {
		t.Errorf("machine m2 lists regressions:\n%s", m2)
	}
	// The fleet's regressions, linked from every page's navigation, and
	// filtered by package and date.
	if !strings.Contains(m2, `<nav><a href="/">benchctl results</a><a href="/">machines</a><a href="/regressions">regressions</a></nav>`) {
		t.Errorf("no navigation bar:\n%.600s", m2)
	}
	code, regs := get(t, f.http.URL+"/regressions")
	if code != 200 || !strings.Contains(regs, "1 open regression,") || !strings.Contains(regs, `<a href="/machine/m1">m1</a>`) ||
		!strings.Contains(regs, "BenchmarkGet/impl=paged-2") || !strings.Contains(regs, "run-to-run ±") ||
		!strings.Contains(regs, "5 runs since") || strings.Count(regs, `<svg class="spark"`) != 1 {
		t.Errorf("/regressions: %d\n%s", code, regs)
	}
	for _, q := range []string{"?pkg=example.com/none", "?since=2999-01-01"} {
		if code, regs := get(t, f.http.URL+"/regressions"+q); code != 200 || !strings.Contains(regs, "0 open regressions") || strings.Contains(regs, "BenchmarkGet") {
			t.Errorf("/regressions%s: %d\n%s", q, code, regs)
		}
	}
	if code, _ := get(t, f.http.URL+"/regressions?since=yesterday"); code != 400 {
		t.Errorf("/regressions?since=yesterday: %d, want 400", code)
	}
	seriesURL := f.http.URL + "/series?machine=m1&benchmark=BenchmarkGet%2Fimpl%3Dpaged-2&unit=sec%2Fop"
	code, ser := get(t, seriesURL)
	// The chart inline, a tooltip for each of its 16 runs, the forks'
	// range a band.
	if code != 200 || !strings.Contains(ser, `<div class="chart" id="chart"`) || strings.Count(ser, `fill="transparent"><title>`) != 16 ||
		!strings.Contains(ser, "fill-opacity:0.19") ||
		strings.Count(ser, "<tr") < 17 || !strings.Contains(ser, "open regression") || !strings.Contains(ser, `href="/chart.svg?`) {
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

// TestUnavailableStoreIs503AndTheServerStaysUp: a store that fails is a
// 503 without the database's own words, and /healthz says so.
func TestUnavailableStoreIs503AndTheServerStaysUp(t *testing.T) {
	f := newFixture(t)
	f.st.Close()
	body, ct := form(map[string][]byte{"a.txt": night("m1", "e1", 0, 100)}, "commit")
	if code, msg := post(t, f.http.URL, f.token, body, ct); code != 503 || msg != "store unavailable: nothing was stored; try again later\n" {
		t.Errorf("upload to a closed store: %d %q", code, msg)
	}
	if code, msg := get(t, f.http.URL+"/"); code != 503 || strings.Contains(msg, "sql:") {
		t.Errorf("home on a closed store: %d %q", code, msg)
	}
	if code, _ := get(t, f.http.URL+"/healthz"); code != 503 {
		t.Errorf("healthz of a closed store: %d, want 503", code)
	}
}

// TestRemovedStoreFileIsRefused: once the SQLite file is removed while
// serving, uploads are 503 (the client keeps them), no empty database
// takes its place, and /healthz says so, as for a file replaced by
// another.
func TestRemovedStoreFileIsRefused(t *testing.T) {
	for _, how := range []string{"removed", "replaced"} {
		dir := t.TempDir()
		db := filepath.Join(dir, "r.db")
		st, err := store.Open(context.Background(), "sqlite:"+db)
		if err != nil {
			t.Fatal(err)
		}
		tok, _ := NewToken(filepath.Join(dir, "tokens"), "ci")
		toks, _ := LoadTokens(filepath.Join(dir, "tokens"))
		hs := httptest.NewServer((&Server{Store: st, Tokens: toks}).Handler())
		body, ct := form(map[string][]byte{"a.txt": night("m1", "e1", 0, 100)}, "commit")
		if code, msg := post(t, hs.URL, tok, body, ct); code != 200 {
			t.Fatalf("first upload: %d %s", code, msg)
		}
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(db + suffix)
		}
		if how == "replaced" {
			other, err := store.Open(context.Background(), "sqlite:"+db)
			if err != nil {
				t.Fatal(err)
			}
			other.Close()
		}
		for n := 1; n <= 3; n++ {
			body, ct = form(map[string][]byte{"a.txt": night("m1", "e1", n, 100)}, "commit")
			if code, msg := post(t, hs.URL, tok, body, ct); code != 503 {
				t.Errorf("%s: upload %d: %d %s, want 503", how, n, code, msg)
			}
		}
		if code, _ := get(t, hs.URL+"/healthz"); code != 503 {
			t.Errorf("%s: healthz %d, want 503", how, code)
		}
		if _, err := os.Stat(db); how == "removed" && err == nil {
			t.Errorf("an empty database was made where the removed one was")
		}
		hs.Close()
		st.Close()
	}
}

// TestSecurityHeadersAndBearerCase: every answer carries the security
// headers; the Bearer scheme is case-insensitive.
func TestSecurityHeadersAndBearerCase(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/", "/healthz", "/api/machines", "/nowhere"} {
		resp, err := http.Get(f.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", path, h)
		}
	}
	for _, scheme := range []string{"bearer", "BEARER", "Bearer"} {
		body, ct := form(map[string][]byte{scheme + ".txt": night("m1", "e1", len(scheme)+int(scheme[1]), 100)}, "commit")
		req, _ := http.NewRequest("POST", f.http.URL+"/upload", body)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", scheme+" "+f.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("Authorization: %s TOKEN: %d", scheme, resp.StatusCode)
		}
	}
}

// TestUploadAnswerCarriesWarnings: what the index leaves out of the
// series is said in the upload's answer; go test's MB/s makes a series.
func TestUploadAnswerCarriesWarnings(t *testing.T) {
	f := newFixture(t)
	body, ct := form(map[string][]byte{"mem.txt": []byte("machine-id: m\nBenchmarkX 1 16 B/op\n")}, "commit")
	code, msg := post(t, f.http.URL, f.token, body, ct)
	if code != 200 || !strings.Contains(msg, `"warnings":["mem.txt: no time or throughput result: not counted as a run"]`) {
		t.Errorf("an upload without times: %d %s", code, msg)
	}
	body, ct = form(map[string][]byte{"a.txt": night("m1", "e1", 0, 100)}, "commit")
	if code, msg := post(t, f.http.URL, f.token, body, ct); code != 200 || !strings.Contains(msg, `"warnings":[]`) {
		t.Errorf("a clean upload: %d %s", code, msg)
	}
	// go test's throughput, MB/s, is a series of its own (higher is
	// better); a throughput that is not a positive number is refused.
	body, ct = form(map[string][]byte{"rate.txt": []byte("machine-id: m\nBenchmarkHash 1000 812.5 MB/s\n")}, "commit")
	if code, msg := post(t, f.http.URL, f.token, body, ct); code != 200 || !strings.Contains(msg, `"warnings":[]`) {
		t.Errorf("an upload of MB/s alone: %d %s", code, msg)
	}
	if code, body := get(t, f.http.URL+"/api/machines"); code != 200 || !strings.Contains(body, `"m"`) {
		t.Errorf("the MB/s upload's machine: %d %s", code, body)
	}
	if code, body := get(t, f.http.URL+"/machine/m"); code != 200 || !strings.Contains(body, "Hash") || !strings.Contains(body, "B/s") {
		t.Errorf("the machine page of the MB/s series: %d\n%.2000s", code, body)
	}
	body, ct = form(map[string][]byte{"nan.txt": []byte("machine-id: m\nBenchmarkHash 1000 100 ns/op NaN MB/s\n")}, "commit")
	if code, msg := post(t, f.http.URL, f.token, body, ct); code != 400 || !strings.Contains(msg, "NaN MB/s: a time or throughput is a positive number") {
		t.Errorf("NaN MB/s: %d %s", code, msg)
	}
}

// TestTokensFailClosed: a tokens file that is removed or damaged while
// serving accepts no token (503 for uploads, and the log says why) until
// it is readable again; a revoked token stops at once.
func TestTokensFailClosed(t *testing.T) {
	f := newFixture(t)
	var logs bytes.Buffer
	f.srv.Log = log.New(&logs, "", 0)
	f.srv.Tokens.Log = f.srv.Log
	path := f.srv.Tokens.path
	good, _ := os.ReadFile(path)
	try := func(n int) int {
		body, ct := form(map[string][]byte{fmt.Sprintf("n%d.txt", n): night("m1", "e1", n, 100)}, "commit")
		code, _ := post(t, f.http.URL, f.token, body, ct)
		return code
	}
	if code := try(1); code != 200 {
		t.Fatalf("with the token: %d", code)
	}
	os.WriteFile(path, []byte("sha256:zz not a hash\n"), 0o600)
	if code := try(2); code != 503 {
		t.Errorf("damaged tokens file: %d, want 503", code)
	}
	os.Remove(path)
	if code := try(3); code != 503 {
		t.Errorf("removed tokens file: %d, want 503", code)
	}
	if !strings.Contains(logs.String(), "refusing every upload until the tokens file is readable") {
		t.Errorf("nothing logged:\n%s", logs.String())
	}
	os.WriteFile(path, good, 0o600)
	if code := try(4); code != 200 {
		t.Errorf("repaired tokens file: %d", code)
	}
	if _, err := RevokeTokens(path, "ci"); err != nil {
		t.Fatal(err)
	}
	if code := try(5); code != 401 {
		t.Errorf("revoked token: %d, want 401", code)
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
	if info, err := toks.Lookup(a); err != nil || info.Name != "alice" {
		t.Errorf("alice: %q %v", info.Name, err)
	}
	if info, err := toks.Lookup(b); err != nil || info.Name != "bob" {
		t.Errorf("bob, made after loading: %q %v", info.Name, err)
	}
	if _, err := toks.Lookup(a + "x"); !errors.Is(err, ErrUnknownToken) {
		t.Errorf("a wrong token: %v", err)
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
	// List and revoke, by name or by ID; revoking nothing is an error.
	ts, err := ReadTokens(p)
	if err != nil || len(ts) != 2 || ts[0].Name != "alice" || ts[1].Name != "bob" || len(ts[0].ID()) != 12 || ts[0].Made == "" {
		t.Fatalf("list: %+v %v", ts, err)
	}
	if gone, err := RevokeTokens(p, ts[1].ID()); err != nil || len(gone) != 1 || gone[0].Name != "bob" {
		t.Errorf("revoke bob by ID: %+v %v", gone, err)
	}
	if _, err := toks.Lookup(b); !errors.Is(err, ErrUnknownToken) {
		t.Errorf("bob after his revocation: %v", err)
	}
	if _, err := toks.Lookup(a); err != nil {
		t.Errorf("alice after bob's revocation: %v", err)
	}
	if _, err := RevokeTokens(p, "carol"); err == nil || !strings.Contains(err.Error(), "no token is named") {
		t.Errorf("revoke nobody: %v", err)
	}
	// A second token of a taken name is refused (revoking the name would
	// take both); a short ID prefix revokes its one token.
	if _, err := NewToken(p, "alice"); err == nil || !strings.Contains(err.Error(), `token name "alice" is taken by token `+ts[0].ID()) {
		t.Errorf("a second alice: %v", err)
	}
	if gone, err := RevokeTokens(p, ts[0].ID()[:5]); err != nil || len(gone) != 1 || gone[0].Name != "alice" {
		t.Errorf("revoke alice by the first 5 digits of her ID: %+v %v", gone, err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("after revoke: %v, want 0600", st.Mode())
	}
	// token new makes an existing file readable by others 0600.
	q := filepath.Join(t.TempDir(), "open")
	os.WriteFile(q, []byte(tokensHeader+"\n"), 0o644)
	if _, err := NewToken(q, "dave"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(q); st.Mode().Perm() != 0o600 {
		t.Errorf("token new left %v", st.Mode())
	}
}

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}

// TestMachinePageIsPaginated: a machine's benchmarks are listed
// SeriesPerPage at a time, so one large upload does not make a page of
// hundreds of megabytes.
func TestMachinePageIsPaginated(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	b.WriteString("machine-id: big\ncommit: 1\npkg: example.com/big\n\n")
	for i := range 450 {
		fmt.Fprintf(&b, "BenchmarkB%03d-2 10 %d ns/op\n", i, 100+i)
	}
	body, ct := form(map[string][]byte{"big.txt": []byte(b.String())}, "commit")
	if code, msg := post(t, f.http.URL, f.token, body, ct); code != 200 {
		t.Fatalf("upload: %d %s", code, msg)
	}
	rows := func(page string) int {
		i := strings.Index(page, `<table id="series">`)
		if i < 0 {
			t.Fatalf("no series table:\n%.2000s", page)
		}
		rest := page[i:]
		return strings.Count(rest[:strings.Index(rest, "</table>")], "<tr") - 1
	}
	code, page := get(t, f.http.URL+"/machine/big")
	if code != 200 || rows(page) != SeriesPerPage || !strings.Contains(page, "page 1 of 3") || !strings.Contains(page, `href="?page=2#benchmarks">next`) {
		t.Errorf("page 1: %d, %d rows\n%.3000s", code, rows(page), page)
	}
	code, page = get(t, f.http.URL+"/machine/big?page=3")
	if code != 200 || rows(page) != 50 || !strings.Contains(page, "401–450 of 450") || !strings.Contains(page, "BenchmarkB449") {
		t.Errorf("page 3: %d, %d rows", code, rows(page))
	}
	if code, _ := get(t, f.http.URL+"/machine/big?page=4"); code != 404 {
		t.Errorf("page 4 of 3: %d", code)
	}
	if code, _ := get(t, f.http.URL+"/machine/big?page=x"); code != 400 {
		t.Errorf("page x: %d", code)
	}
}

// TestFailedAnalysisIsRetried: an analysis that fails (a full disk) is
// tried again without a restart, and the series end up analyzed.
func TestFailedAnalysisIsRetried(t *testing.T) {
	f := newFixture(t)
	var calls atomic.Int32
	f.srv.analyze = func(ctx context.Context, m string) (int, error) {
		if calls.Add(1) == 1 {
			return 0, errors.New("database or disk is full")
		}
		return f.st.Analyze(ctx, m)
	}
	f.srv.AnalyzeRetry = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.srv.Run(ctx)
	upload(t, f.client(), "n0.txt", night("m1", "e1", 0, 100))
	k := store.SeriesKey{Machine: "m1", Pkg: "example.com/m", Benchmark: "BenchmarkPut-2", Unit: "sec/op"}
	for deadline := time.Now().Add(10 * time.Second); ; {
		ser, err := f.st.Series(context.Background(), k)
		if err == nil && !ser.Pending && calls.Load() >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d analyses the series is still pending: %+v %v", calls.Load(), ser, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestJSONNamesAndEmptyLists: the API's names are camelCase and its
// empty lists [], never null.
func TestJSONNamesAndEmptyLists(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/api/machines", "/api/changepoints?machine=nobody", "/api/across?benchmark=BenchmarkNone"} {
		if code, body := get(t, f.http.URL+path); code != 200 || strings.TrimSpace(body) != "[]" {
			t.Errorf("%s on an empty store: %d %q, want []", path, code, body)
		}
	}
	upload(t, f.client(), "n0.txt", night("m1", "e1", 0, 100))
	_, body := get(t, f.http.URL+"/api/machines")
	for _, key := range []string{`"id": "m1"`, `"firstSeen"`, `"lastSeen"`, `"runs": 1`, `"facts"`} {
		if !strings.Contains(body, key) {
			t.Errorf("/api/machines lacks %s:\n%s", key, body)
		}
	}
	if strings.Contains(body, `"ID"`) || strings.Contains(body, `"FirstSeen"`) {
		t.Errorf("/api/machines has Go's names:\n%s", body)
	}
	_, body = get(t, f.http.URL+"/api/series?machine=m1&pkg=example.com/m&benchmark=BenchmarkPut-2")
	if !strings.Contains(body, `"changePoints": []`) || !strings.Contains(body, `"points": [`) {
		t.Errorf("/api/series:\n%s", body)
	}
}

// TestQueriesAreBoundedInTime: the store's work for a request stops at
// QueryTimeout with a 503: a page's from the request's start, an
// upload's from the end of its body, also while another writer holds
// the database's write lock (which SQLite would wait 30 s for).
func TestQueriesAreBoundedInTime(t *testing.T) {
	f := newFixture(t)
	body, ct := form(map[string][]byte{"a.txt": night("m1", "e1", 0, 100)}, "commit")
	if code, msg := post(t, f.http.URL, f.token, body, ct); code != 200 {
		t.Fatalf("upload: %d %s", code, msg)
	}
	f.srv.QueryTimeout = time.Nanosecond
	for _, path := range []string{"/", "/api/machines", "/machine/m1", "/search?q=machine-id:m1", "/uploads"} {
		if code, _ := get(t, f.http.URL+path); code != 503 {
			t.Errorf("%s with its queries' time spent: %d, want 503", path, code)
		}
	}
	if code, _ := get(t, f.http.URL+"/healthz"); code != 503 {
		t.Errorf("/healthz with its queries' time spent: %d, want 503", code)
	}

	// A writer holding the lock: the upload gives up after QueryTimeout.
	f.srv.QueryTimeout = 300 * time.Millisecond
	db, err := sql.Open("sqlite", f.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	body, ct = form(map[string][]byte{"b.txt": night("m1", "e1", 1, 100)}, "commit")
	start := time.Now()
	code, _ := post(t, f.http.URL, f.token, body, ct)
	if took := time.Since(start); code != 503 || took > 10*time.Second {
		t.Errorf("upload while another writer holds the lock: %d after %v, want 503 within about %v", code, took, f.srv.QueryTimeout)
	}
}

// A prefix that begins two tokens' IDs revokes neither and names both; a
// prefix shorter than MinIDPrefix, or not hex, is not taken for an ID.
func TestRevokeByAmbiguousPrefix(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tokens")
	one, two := "abcdef01"+strings.Repeat("1", 56), "abcdef02"+strings.Repeat("2", 56)
	file := tokensHeader + "\nsha256:" + one + " box1 2026-12-01T00:00:00Z\nsha256:" + two + " box2 2026-12-02T00:00:00Z\n"
	if err := os.WriteFile(p, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := RevokeTokens(p, "abcdef0"); err == nil || !strings.Contains(err.Error(), "begins the IDs of 2 tokens (abcdef011111, abcdef022222)") {
		t.Errorf("an ambiguous prefix: %v", err)
	}
	for _, who := range []string{"abc", "zzzzzz"} {
		if _, err := RevokeTokens(p, who); err == nil || !strings.Contains(err.Error(), "not the beginning of an ID") {
			t.Errorf("revoke %q: %v", who, err)
		}
	}
	if data, _ := readFile(p); data != file {
		t.Errorf("a refused revocation changed the file:\n%s", data)
	}
	if gone, err := RevokeTokens(p, "ABCDEF02"); err != nil || len(gone) != 1 || gone[0].Name != "box2" {
		t.Errorf("revoke box2 by its ID in capitals: %+v %v", gone, err)
	}
}

// TestACutReadIsRetryable: a read whose time limit ran out while its
// query ran (PostgreSQL's driver says "context canceled" for it) answers
// a retryable 503, not a 500; a query of more words than MaxQueryWords
// is a 400 before any query runs.
func TestACutReadIsRetryable(t *testing.T) {
	s := &Server{}
	s.Handler() // its defaults: the log
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest("GET", "/search?q=machine-id:m1", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	s.fail(w, r, fmt.Errorf("search: %w", context.Canceled))
	if w.Code != 503 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "ran past this server's time limit") {
		t.Errorf("a cut read: %d %q %q", w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	f := newFixture(t)
	if code, body := get(t, f.http.URL+"/search?q="+strings.Repeat("a:b+", store.MaxQueryWords+1)); code != 400 || !strings.Contains(body, "words, at most") {
		t.Errorf("a query of %d words: %d %s", store.MaxQueryWords+1, code, body)
	}
}

// TestViewURL: an upload's answer links its page on the Host the
// uploader asked for, unless the server was given its public URL, which
// a forged Host header then does not change; a public URL that is not an
// absolute http(s) address is refused.
func TestViewURL(t *testing.T) {
	f := newFixture(t)
	upload := func(name string) string {
		body, ct := form(map[string][]byte{name: night("m1", "e1", 0, 100)}, "commit")
		req, _ := http.NewRequest("POST", f.http.URL+"/upload", body)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+f.token)
		req.Host = "evil.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ans struct {
			UploadID, ViewURL string
		}
		if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || resp.StatusCode != 200 {
			t.Fatalf("upload: %d %v", resp.StatusCode, err)
		}
		if !strings.HasSuffix(ans.ViewURL, "/upload/"+ans.UploadID) {
			t.Errorf("viewurl %q for upload %s", ans.ViewURL, ans.UploadID)
		}
		return ans.ViewURL
	}
	if u := upload("a.txt"); !strings.HasPrefix(u, "http://evil.example/") {
		t.Errorf("without --public-url: %q, want the request's Host", u)
	}
	f.srv.PublicURL = "https://bench.example.com/"
	if u := upload("b.txt"); !strings.HasPrefix(u, "https://bench.example.com/upload/") {
		t.Errorf("with a public URL: %q", u)
	}
	for _, bad := range []string{"bench.example.com", "ftp://x", "https://", "https://x/?a=1", "https://u:p@x", "https://x/#f"} {
		if err := CheckPublicURL(bad); err == nil {
			t.Errorf("public URL %q accepted", bad)
		}
	}
	if err := CheckPublicURL("https://bench.example.com/perf"); err != nil {
		t.Error(err)
	}
}

// TestBisectionContentIsChecked: a bisection whose share of the change is
// not a number within ±MaxShare, or whose culprit is no commit hash, is
// refused (1e308 showed "+Inf % of the change"); one for a machine
// without runs, or of a benchmark without a change point, is stored with
// a warning that it is shown beside nothing.
func TestBisectionContentIsChecked(t *testing.T) {
	f := newFixture(t)
	body, ct := form(map[string][]byte{"a.txt": night("m1", "e1", 0, 100)}, "commit")
	if code, msg := post(t, f.http.URL, f.token, body, ct); code != 200 {
		t.Fatalf("upload: %d %s", code, msg)
	}
	bisection := func(machine, share, culprit string) []byte {
		return fmt.Appendf(nil, "machine-id: %s\nbisect-benchmark: BenchmarkGet/impl=paged-2\nbisect-unit: sec/op\nbisect-good: %040x\nbisect-bad: %040x\nbisect-culprit: %s\nbisect-share: %s\nBenchmarkGet/impl=paged-2 1000 125 ns/op\n",
			machine, 1, 2, culprit, share)
	}
	commit := fmt.Sprintf("%040x", 7)
	for _, tc := range []struct {
		machine, share, culprit string
		code                    int
		want                    string
	}{
		{"m1", "1e308", commit, 400, `bisect-share "1e308": a share of the change is a number within ±10`},
		{"m1", "NaN", commit, 400, `bisect-share "NaN"`},
		{"m1", "0.9", "HEAD~1; rm -rf", 400, `bisect-culprit "HEAD~1; rm -rf": a culprit is a commit hash`},
		{"ghost", "0.9", commit, 200, "a bisection for machine ghost, which has no runs here: it is shown beside no regression"},
		{"m1", "0.9", commit, 200, "a bisection of BenchmarkGet/impl=paged-2 sec/op, which has no change point on machine m1"},
	} {
		body, ct := form(map[string][]byte{"b.txt": bisection(tc.machine, tc.share, tc.culprit)}, "commit")
		if code, msg := post(t, f.http.URL, f.token, body, ct); code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("%s share %s culprit %q: %d %s; want %d with %q", tc.machine, tc.share, tc.culprit, code, msg, tc.code, tc.want)
		}
	}
}

// TestUploadsAreBounded: an upload of more than MaxFiles files, or of
// more than MaxBisections bisections of one machine, is refused (two
// uploads of 20,000 forged bisections of one machine were accepted, and
// its page then read them all on every view); one of MaxBisections
// bisections, each of another machine's, is taken.
func TestUploadsAreBounded(t *testing.T) {
	f := newFixture(t)
	f.srv.MaxUpload = 4 << 20 // the fixture's 64 KiB would refuse 1001 files by their size
	bisections := func(n int, machine func(int) string) map[string][]byte {
		files := map[string][]byte{}
		for i := range n {
			files[fmt.Sprintf("b%04d.txt", i)] = fmt.Appendf(nil, "machine-id: %s\nbisect-benchmark: BenchmarkB%d\nbisect-unit: sec/op\nbisect-good: %040x\nbisect-bad: %040x\nBenchmarkB%d 10 100 ns/op\n", machine(i), i, 1, 2, i)
		}
		return files
	}
	runs := map[string][]byte{}
	for i := range store.MaxFiles + 1 {
		runs[fmt.Sprintf("r%04d.txt", i)] = fmt.Appendf(nil, "machine-id: m1\nBenchmarkR%d 10 100 ns/op\n", i)
	}
	one := func(int) string { return "m1" }
	for _, tc := range []struct {
		what  string
		files map[string][]byte
		code  int
		want  string
	}{
		{"1001 runs", runs, 400, "1001 files in one upload: at most 1000"},
		{"101 bisections of m1", bisections(store.MaxBisections+1, one), 400, "more than 100 bisections of machine m1 in one upload"},
		{"101 bisections of 101 machines", bisections(store.MaxBisections+1, func(i int) string { return fmt.Sprintf("m%d", i) }), 200, ""},
	} {
		body, ct := form(tc.files, "commit")
		if code, msg := post(t, f.http.URL, f.token, body, ct); code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %s; want %d with %q", tc.what, code, msg, tc.code, tc.want)
		}
	}
}

// TestUploadPageIsPaginated: an upload of 205 files is shown 100 files a
// page, with links between the pages; a page past the last is a 404 and
// a page that is not a number a 400.
func TestUploadPageIsPaginated(t *testing.T) {
	f := newFixture(t)
	files := map[string][]byte{}
	for i := range 205 {
		files[fmt.Sprintf("f%03d.txt", i)] = fmt.Appendf(nil, "machine-id: m1\nBenchmarkX%d 10 100 ns/op\n", i)
	}
	body, ct := form(files, "commit")
	code, msg := post(t, f.http.URL, f.token, body, ct)
	if code != 200 {
		t.Fatalf("upload: %d %s", code, msg)
	}
	var ans struct{ UploadID string }
	if err := json.Unmarshal([]byte(msg), &ans); err != nil {
		t.Fatal(err)
	}
	base := f.http.URL + "/upload/" + ans.UploadID
	for _, tc := range []struct {
		query       string
		files       int
		prev, next  bool
		first, last string
	}{
		{"", 100, false, true, "part 0 ·", "part 99 ·"},
		{"?page=2", 100, true, true, "part 100 ·", "part 199 ·"},
		{"?page=3", 5, true, false, "part 200 ·", "part 204 ·"},
	} {
		code, page := get(t, base+tc.query)
		if n := strings.Count(page, "<h2>"); code != 200 || n != tc.files || !strings.Contains(page, tc.first) || !strings.Contains(page, tc.last) ||
			strings.Contains(page, ">previous<") != tc.prev || strings.Contains(page, ">next<") != tc.next {
			t.Errorf("%s: %d, %d files; want %d from %q to %q, previous %v, next %v", tc.query, code, n, tc.files, tc.first, tc.last, tc.prev, tc.next)
		}
	}
	if code, _ := get(t, base+"?page=4"); code != 404 {
		t.Errorf("page 4 of 3: %d, want 404", code)
	}
	if code, _ := get(t, base+"?page=x"); code != 400 {
		t.Errorf("page x: %d, want 400", code)
	}
}

// TestRunDatesReadApart: runs seconds apart are dated to the second, runs
// on a minute to the minute.
func TestRunDatesReadApart(t *testing.T) {
	date := pageFuncs["date"].(func(time.Time) string)
	at := time.Date(2026, 12, 3, 17, 55, 0, 0, time.UTC)
	if a, b := date(at), date(at.Add(7*time.Second)); a != "2026-12-03 17:55" || b != "2026-12-03 17:55:07" {
		t.Errorf("dates %q and %q", a, b)
	}
}

// TestTokensBoundToMachines: a token made for machine m1 uploads m1's
// files; an upload with a file of m2 (a run or a bisection) is a 403 and
// stores nothing; the tokens file keeps the binding, and a malformed
// binding is refused when the file is read.
func TestTokensBoundToMachines(t *testing.T) {
	f := newFixture(t)
	tok, err := NewToken(f.tokPath, "box1", "m1")
	if err != nil {
		t.Fatal(err)
	}
	up := func(files map[string][]byte) (int, string) {
		body, ct := form(files, "commit")
		return post(t, f.http.URL, tok, body, ct)
	}
	if code, msg := up(map[string][]byte{"a.txt": night("m1", "e1", 0, 100)}); code != 200 {
		t.Fatalf("m1's token, m1's file: %d %s", code, msg)
	}
	for _, files := range []map[string][]byte{
		{"b.txt": night("m2", "e1", 0, 100)},
		{"c.txt": night("m1", "e1", 1, 100), "d.txt": night("m2", "e1", 1, 100)},
		{"bis.txt": []byte("machine-id: m2\nbisect-benchmark: BenchmarkGet\nbisect-unit: sec/op\nbisect-good: " + strings.Repeat("1", 40) + "\nbisect-bad: " + strings.Repeat("2", 40) + "\nBenchmarkGet 10 100 ns/op\n")},
	} {
		if code, msg := up(files); code != 403 || !strings.Contains(msg, "is of machine m2; box1's token uploads for m1 only") {
			t.Errorf("m1's token, a file of m2: %d %s", code, msg)
		}
	}
	if ms, _ := f.st.Machines(context.Background()); len(ms) != 1 || ms[0].ID != "m1" || ms[0].Runs != 1 {
		t.Errorf("machines after the refused uploads: %+v", ms)
	}
	// The unbound token still uploads for any machine.
	body, ct := form(map[string][]byte{"e.txt": night("m2", "e1", 2, 100)}, "commit")
	if code, msg := post(t, f.http.URL, f.token, body, ct); code != 200 {
		t.Errorf("an unbound token, m2's file: %d %s", code, msg)
	}
	ts, err := ReadTokens(f.tokPath)
	if err != nil || len(ts) != 2 || len(ts[1].Machines) != 1 || ts[1].Machines[0] != "m1" || !ts[1].Allows("m1") || ts[1].Allows("m2") || !ts[0].Allows("m2") {
		t.Errorf("tokens file: %+v %v", ts, err)
	}
	if _, err := NewToken(f.tokPath, "box2", "m 2"); err == nil {
		t.Error("a machine-id with a space accepted")
	}
	bad := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(bad, []byte("sha256:"+strings.Repeat("a", 64)+" box 2026-12-05T00:00:00Z hosts=m1\n"), 0o600)
	if _, err := ReadTokens(bad); err == nil || !strings.Contains(err.Error(), "a fourth field is machines=ID") {
		t.Errorf("a malformed binding: %v", err)
	}
}
