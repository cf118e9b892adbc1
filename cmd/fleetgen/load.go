package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/server"
	"github.com/ledgerbench/ledgerbench/internal/store"
	"github.com/ledgerbench/ledgerbench/internal/upload"
	"gonum.org/v1/gonum/stat"
)

// largestByFiles is the upload of the most files a server accepts:
// store.MaxFiles nightly files of one machine, store.MaxBenchmarks
// benchmarks among them, payload.MaxUpload bytes in all (less the
// multipart form's own). Its stamp makes each file's bytes new to a store
// that holds an earlier one.
func largestByFiles(stamp int64) []payload.File {
	per := store.MaxBenchmarks / store.MaxFiles
	line := func(i, fork int) string {
		return fmt.Sprintf("BenchmarkLargestUploadByFiles/case=%05d-2 \t 1000000\t %d.%d ns/op\t 16 B/op\t 1 allocs/op\n", i, 100+i%900, fork%10)
	}
	head := func(f int) string {
		return fmt.Sprintf("machine-id: many-files\ngoos: linux\ngoarch: amd64\ncommit: %040d\nupload-stamp: %020d\n", f, stamp)
	}
	// The form adds a part header to each file.
	room := (payload.MaxUpload-4096)/store.MaxFiles - 256
	forks := (room - len(head(0))) / (per * len(line(0, 0)))
	files := make([]payload.File, store.MaxFiles)
	for f := range files {
		var b bytes.Buffer
		b.WriteString(head(f))
		for fork := range forks {
			for i := f * per; i < (f+1)*per; i++ {
				b.WriteString(line(i, fork))
			}
		}
		files[f] = payload.File{Name: fmt.Sprintf("night-%04d.txt", f), Data: b.Bytes()}
	}
	return files
}

// LoadPhase is what the readers waited while one upload (or none) was
// being stored.
type LoadPhase struct {
	Name   string // "quiet", or the upload's
	Files  int
	Bytes  int
	Upload time.Duration // the upload's answer, from its first byte sent
	UpErr  error
	Paths  map[string]*Waits // by path
}

// Waits are the answers to one path's requests.
type Waits struct {
	Took   []time.Duration // sorted once the phase ends
	NotOK  int             // answers other than 200, and failed requests
	Status map[int]int
}

// Quantile is the q-th quantile of the answers' times: the least time
// that at least a share q of them took no longer than (stat.Empirical).
func (w *Waits) Quantile(q float64) time.Duration {
	if len(w.Took) == 0 {
		return 0
	}
	xs := make([]float64, len(w.Took))
	for i, d := range w.Took {
		xs[i] = float64(d)
	}
	return time.Duration(stat.Quantile(q, stat.Empirical, xs, nil))
}

// loadPaths are what each reader asks for, in turn.
var loadPaths = []string{"/", "/healthz"}

// measureLoad serves the store at spec as benchctl serve does (its
// handler on a local port, its analysis in the background) and has
// readers clients ask for the home page and /healthz in turn, each as
// soon as its last answer came: first for quiet with no upload, then
// while the largest upload by bytes and the largest by files are
// posted one after the other with the upload client.
func measureLoad(ctx context.Context, spec string, readers int, quiet time.Duration) ([]*LoadPhase, error) {
	st, err := store.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	dir, err := os.MkdirTemp("", "fleetgen-load-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base, tok, err := serveLoad(ctx, st, dir)
	if err != nil {
		return nil, err
	}
	spool := &upload.Spool{Dir: filepath.Join(dir, "spool"), Token: tok, Timeout: 10 * time.Minute}
	stamp := time.Now().UnixNano()
	uploads := []struct {
		name  string
		files []payload.File
	}{
		{"largest by bytes", []payload.File{largestUpload(stamp)}},
		{"largest by files", largestByFiles(stamp)},
	}
	var phases []*LoadPhase
	phase := func(name string, files []payload.File, body func() error) {
		p := &LoadPhase{Name: name, Files: len(files)}
		for _, f := range files {
			p.Bytes += len(f.Data)
		}
		p.Paths = read(ctx, base, readers, spool, func() {
			t := time.Now()
			p.UpErr = body()
			p.Upload = time.Since(t)
		})
		phases = append(phases, p)
	}
	phase("quiet", nil, func() error { time.Sleep(quiet); return nil })
	for _, u := range uploads {
		phase(u.name, u.files, func() error {
			res := spool.Send(ctx, base, u.files)
			return res.Err
		})
	}
	return phases, nil
}

// serveLoad serves st as benchctl serve does, until ctx ends: its
// handler on a local port, its analysis in the background, a token in
// dir. It returns the server's URL and the token.
func serveLoad(ctx context.Context, st *store.Store, dir string) (base, tok string, err error) {
	tokens := filepath.Join(dir, "tokens")
	if tok, err = server.NewToken(tokens, "load"); err != nil {
		return "", "", err
	}
	toks, err := server.LoadTokens(tokens)
	if err != nil {
		return "", "", err
	}
	srv := &server.Server{Store: st, Tokens: toks}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", err
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	go func() { <-ctx.Done(); hs.Close() }()
	go srv.Run(ctx)
	return "http://" + ln.Addr().String(), tok, nil
}

// smallUpload is what the small writer's answers are kept under.
const smallUpload = "POST /upload"

// read has readers clients ask for loadPaths in turn, and a writer post
// a one-line upload every 50 ms, while during runs; it returns their
// answers by path.
func read(ctx context.Context, base string, readers int, spool *upload.Spool, during func()) map[string]*Waits {
	stop := make(chan struct{})
	var mu sync.Mutex
	out := map[string]*Waits{}
	for _, p := range append(loadPaths, smallUpload) {
		out[p] = &Waits{Status: map[int]int{}}
	}
	client := &http.Client{Timeout: time.Minute}
	var wg sync.WaitGroup
	wg.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			t0 := time.Now()
			res := spool.Send(ctx, base, []payload.File{smallFile(n, t0.UnixNano())})
			took := time.Since(t0)
			mu.Lock()
			w := out[smallUpload]
			w.Took = append(w.Took, took)
			if res.Err != nil {
				w.NotOK++
			} else {
				w.Status[http.StatusOK]++
			}
			mu.Unlock()
		}
	})
	for r := range readers {
		wg.Go(func() {
			for i := r; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				path := loadPaths[i%len(loadPaths)]
				took, code := get(ctx, client, base+path)
				mu.Lock()
				w := out[path]
				w.Took = append(w.Took, took)
				w.Status[code]++
				if code != http.StatusOK {
					w.NotOK++
				}
				mu.Unlock()
			}
		})
	}
	during()
	close(stop)
	wg.Wait()
	for _, w := range out {
		slices.Sort(w.Took)
	}
	return out
}

// get asks for u and reads the whole answer: its time and status (0 when
// the request failed).
func get(ctx context.Context, client *http.Client, u string) (time.Duration, int) {
	t0 := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, 0
	}
	resp, err := client.Do(req)
	if err != nil {
		return time.Since(t0), 0
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return time.Since(t0), 0
	}
	return time.Since(t0), resp.StatusCode
}

// writeLoad prints the phases as a Markdown table.
func writeLoad(w io.Writer, spec string, readers int, phases []*LoadPhase) error {
	fmt.Fprintf(w, "%d readers, each asking for %v in turn, and a writer posting a one-line upload every 50 ms (%s), on %s\n\n", readers, loadPaths, smallUpload, backend(spec))
	fmt.Fprintf(w, "| while | files | MiB | upload took | path | requests | median | p99 | max | not 200 |\n|---|--:|--:|--:|---|--:|--:|--:|--:|--:|\n")
	var errs []error
	for _, p := range phases {
		up := "—"
		if p.Files > 0 {
			up = p.Upload.Round(time.Millisecond).String()
		}
		if p.UpErr != nil {
			up = "failed"
			errs = append(errs, fmt.Errorf("%s: %w", p.Name, p.UpErr))
		}
		for _, path := range append(loadPaths, smallUpload) {
			ws := p.Paths[path]
			fmt.Fprintf(w, "| %s | %d | %.1f | %s | `%s` | %d | %v | %v | %v | %d |\n", p.Name, p.Files, float64(p.Bytes)/(1<<20), up, path,
				len(ws.Took), ws.Quantile(0.5).Round(time.Millisecond), ws.Quantile(0.99).Round(time.Millisecond), ws.Quantile(1).Round(time.Millisecond), ws.NotOK)
		}
	}
	return errors.Join(errs...)
}
