package upload

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/server"
	"github.com/ledgerbench/ledgerbench/internal/store"
)

type fixture struct {
	st    *store.Store
	h     http.Handler
	token string
}

func newFixture(t *testing.T) *fixture {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tok, _ := server.NewToken(filepath.Join(dir, "tokens"), "ci")
	toks, err := server.LoadTokens(filepath.Join(dir, "tokens"))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{st: st, h: (&server.Server{Store: st, Tokens: toks}).Handler(), token: tok}
}

func (f *fixture) uploads(t *testing.T) int {
	q, _ := store.ParseQuery("")
	ups, err := f.st.ListUploads(context.Background(), q, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	return len(ups)
}

func run(n int) []payload.File {
	return []payload.File{{Name: "bench.txt", Data: []byte(fmt.Sprintf("machine-id: m1\ncommit: %d\nBenchmarkA-2 100 %d ns/op\n", n, 10+n))}}
}

func TestSendDeliversAndLeavesNothingSpooled(t *testing.T) {
	f := newFixture(t)
	hs := httptest.NewServer(f.h)
	defer hs.Close()
	sp := &Spool{Dir: t.TempDir(), Token: f.token}
	if r := sp.Send(context.Background(), hs.URL, run(1)); r.Err != nil || r.ID != payload.UploadID(run(1)) {
		t.Fatalf("send: %+v", r)
	}
	if r := sp.Send(context.Background(), hs.URL, run(1)); r.Err != nil {
		t.Fatalf("send again: %+v", r)
	}
	if p, _ := sp.Pending(""); len(p) != 0 || f.uploads(t) != 1 {
		t.Errorf("pending %v, %d uploads; want none and 1", p, f.uploads(t))
	}
	// The server's warnings reach the sender.
	renamed := []payload.File{{Name: "renamed.txt", Data: run(1)[0].Data}}
	if r := sp.Send(context.Background(), hs.URL, renamed); r.Err != nil || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "renamed.txt: the same bytes as") {
		t.Errorf("the same bytes renamed: %+v, want the server's warning", r)
	}
	if r := sp.Send(context.Background(), hs.URL, run(2)); r.Err != nil || len(r.Warnings) != 0 {
		t.Errorf("a clean upload: %+v, want no warnings", r)
	}
}

func TestUnreachableServerSpoolsAndFlushDelivers(t *testing.T) {
	f := newFixture(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	sp := &Spool{Dir: t.TempDir(), Token: f.token, Timeout: 5 * time.Second}
	url := "http://" + addr
	for n := 1; n <= 2; n++ {
		if r := sp.Send(context.Background(), url, run(n)); r.Err == nil {
			t.Fatal("an upload to nothing succeeded")
		}
	}
	if p, _ := sp.Pending(url); len(p) != 2 {
		t.Fatalf("pending %v, want 2", p)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	hs := &http.Server{Handler: f.h}
	go hs.Serve(ln)
	defer hs.Close()
	res, err := sp.Flush(context.Background(), "", false)
	if err != nil || len(res) != 2 || res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("flush: %+v, %v", res, err)
	}
	if p, _ := sp.Pending(""); len(p) != 0 || f.uploads(t) != 2 {
		t.Errorf("after flush: pending %v, %d uploads", p, f.uploads(t))
	}
}

func TestSlowServerThatStoresLateIsNotDoubled(t *testing.T) {
	f := newFixture(t)
	var slow atomic.Bool
	slow.Store(true)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slow.Load() {
			// Store the upload, but answer after the client gave up.
			rec := httptest.NewRecorder()
			f.h.ServeHTTP(rec, r)
			time.Sleep(700 * time.Millisecond)
		}
		f.h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	sp := &Spool{Dir: t.TempDir(), Token: f.token, Timeout: 300 * time.Millisecond}
	r := sp.Send(context.Background(), hs.URL, run(1))
	if r.Err == nil || !strings.Contains(r.Err.Error(), "no answer") {
		t.Fatalf("slow server: %+v", r)
	}
	slow.Store(false)
	res, _ := sp.Flush(context.Background(), hs.URL, false)
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("flush: %+v", res)
	}
	if n := f.uploads(t); n != 1 {
		t.Errorf("%d uploads, want 1: the retry duplicated", n)
	}
}

func TestRefusedAndUnauthorizedUploads(t *testing.T) {
	f := newFixture(t)
	hs := httptest.NewServer(f.h)
	defer hs.Close()
	dir := t.TempDir()
	sp := &Spool{Dir: dir, Token: f.token}
	bad := []payload.File{{Name: "bad.txt", Data: []byte("BenchmarkA-2 100 10 ns/op\n")}}
	r := sp.Send(context.Background(), hs.URL, bad)
	if r.Err == nil || !r.Rejected || !strings.Contains(r.Err.Error(), "machine-id") {
		t.Fatalf("no machine-id: %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "rejected", r.ID, "rejection.txt")); err != nil || !strings.Contains(string(b), "400") {
		t.Errorf("rejection not kept: %v %s", err, b)
	}
	anon := &Spool{Dir: dir}
	r = anon.Send(context.Background(), hs.URL, run(3))
	if r.Err == nil || r.Rejected || !strings.Contains(r.Err.Error(), "401") {
		t.Fatalf("no token: %+v", r)
	}
	if p, _ := sp.Pending(""); len(p) != 1 {
		t.Fatalf("the unauthorized upload is not pending: %v", p)
	}
	res, _ := sp.Flush(context.Background(), "", false) // now with the token
	if len(res) != 1 || res[0].Err != nil || f.uploads(t) != 1 {
		t.Errorf("flush with a token: %+v, %d uploads", res, f.uploads(t))
	}
}

// TestDamagedSpoolEntriesAreSetAside: an entry whose record cannot be
// read, whose data file is missing or whose files do not hash to its ID
// is moved to damaged/ with the reason, once, and is no longer pending;
// the others are delivered.
func TestDamagedSpoolEntriesAreSetAside(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	sp := &Spool{Dir: dir, Token: f.token, Timeout: time.Second}
	var ids []string
	for n := 1; n <= 4; n++ {
		r := sp.Send(context.Background(), "http://127.0.0.1:1", run(n))
		if r.Err == nil || !r.Spooled {
			t.Fatalf("send to port 1: %+v", r)
		}
		ids = append(ids, r.ID)
	}
	os.WriteFile(filepath.Join(dir, ids[0], "entry.json"), []byte("{not json"), 0o600)
	os.WriteFile(filepath.Join(dir, ids[1], "0"), []byte("changed"), 0o600)
	os.Remove(filepath.Join(dir, ids[2], "0"))
	hs := httptest.NewServer(f.h)
	defer hs.Close()
	res, err := sp.Flush(context.Background(), hs.URL, true)
	if err != nil || len(res) != 4 {
		t.Fatalf("flush: %v, %d results; want all 4 listed, damaged ones too", err, len(res))
	}
	damaged := map[string]string{}
	for _, r := range res {
		switch {
		case r.Damaged:
			damaged[r.ID] = r.Err.Error()
			if b, err := os.ReadFile(filepath.Join(r.Where, "damage.txt")); err != nil || r.Where != filepath.Join(dir, "damaged", r.ID) || len(b) == 0 {
				t.Errorf("%s: set aside in %q: %v", r.ID, r.Where, err)
			}
		case r.ID != ids[3] || r.Err != nil:
			t.Errorf("the sound entry: %+v", r)
		}
	}
	for i, want := range []string{"entry.json", "hash to", "file 0"} {
		if !strings.Contains(damaged[ids[i]], want) {
			t.Errorf("entry %d: %q, want its damage (%s) named", i, damaged[ids[i]], want)
		}
	}
	if p, _ := sp.Pending(""); len(p) != 0 || f.uploads(t) != 1 {
		t.Errorf("after flush: pending %v, %d uploads; want none and the sound one", p, f.uploads(t))
	}
	if res, _ := sp.Flush(context.Background(), "", false); len(res) != 0 {
		t.Errorf("a second flush tried %+v again", res)
	}
}

// TestServerDownSaysConnectionRefused: the message is the dial's error,
// not the closed pipe x/perf's writer sees.
func TestServerDownSaysConnectionRefused(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	sp := &Spool{Dir: t.TempDir(), Timeout: 5 * time.Second}
	big := run(1)
	big[0].Data = append(big[0].Data, []byte(strings.Repeat("# padding, more than a pipe holds\n", 4096))...)
	for _, files := range [][]payload.File{run(1), big} {
		r := sp.Send(context.Background(), "http://"+addr, files)
		if r.Err == nil || !strings.Contains(r.Err.Error(), "connection refused") || strings.Contains(r.Err.Error(), "closed pipe") {
			t.Errorf("%d bytes to a closed port: %v", len(files[0].Data), r.Err)
		}
	}
}

// TestUnwritableSpoolSaysSo: a spool that cannot be written (here its
// path is a file, which stops root as well) is reported as such, and the
// upload is still tried.
func TestUnwritableSpoolSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	os.WriteFile(path, []byte("not a directory"), 0o600)
	sp := &Spool{Dir: path, Timeout: time.Second}
	r := sp.Send(context.Background(), "http://127.0.0.1:1", run(1))
	if r.Spooled || r.SpoolErr == nil || r.Err == nil {
		t.Errorf("unwritable spool: %+v", r)
	}
}
