package server

import (
	"net/http"
	"testing"
	"time"
)

// TestReadsWaitTheirTurn: with every read slot taken, a page waits its
// time limit and answers a retryable 503, /healthz and uploads do not
// wait, and a freed slot serves the page again.
func TestReadsWaitTheirTurn(t *testing.T) {
	f := newFixture(t)
	f.srv.QueryTimeout = 300 * time.Millisecond
	if cap(f.srv.reads) < 1 {
		t.Fatalf("%d read slots", cap(f.srv.reads))
	}
	for range cap(f.srv.reads) {
		f.srv.reads <- struct{}{}
	}
	start := time.Now()
	resp, err := http.Get(f.http.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || time.Since(start) < 250*time.Millisecond {
		t.Errorf("a page with no read slot free: %d after %v, Retry-After %q; want 503 after its time limit", resp.StatusCode, time.Since(start), resp.Header.Get("Retry-After"))
	}
	if code, _ := get(t, f.http.URL+"/healthz"); code != 200 {
		t.Errorf("/healthz waited for a read slot: %d", code)
	}
	if st := upload(t, f.client(), "n.txt", night("m1", "e1", 1, 100)); st.UploadID == "" {
		t.Error("an upload waited for a read slot")
	}
	<-f.srv.reads
	if code, _ := get(t, f.http.URL+"/"); code != 200 {
		t.Errorf("a page with a read slot free: %d", code)
	}
}
