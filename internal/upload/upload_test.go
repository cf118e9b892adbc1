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
	res, err := sp.Flush(context.Background(), "")
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
	res, _ := sp.Flush(context.Background(), hs.URL)
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
	res, _ := sp.Flush(context.Background(), "") // now with the token
	if len(res) != 1 || res[0].Err != nil || f.uploads(t) != 1 {
		t.Errorf("flush with a token: %+v, %d uploads", res, f.uploads(t))
	}
}

func TestDamagedSpoolEntryIsLeftInPlace(t *testing.T) {
	dir := t.TempDir()
	sp := &Spool{Dir: dir, Timeout: time.Second}
	r := sp.Send(context.Background(), "http://127.0.0.1:1", run(1))
	if r.Err == nil {
		t.Fatal("sent to port 1")
	}
	os.WriteFile(filepath.Join(dir, r.ID, "0"), []byte("changed"), 0o600)
	res, _ := sp.Flush(context.Background(), "")
	if len(res) != 1 || res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "damaged") {
		t.Errorf("damaged entry: %+v", res)
	}
	if p, _ := sp.Pending(""); len(p) != 1 {
		t.Errorf("damaged entry removed: %v", p)
	}
}
