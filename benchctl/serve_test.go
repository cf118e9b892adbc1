package benchctl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/store"
)

// serveProc is benchctl serve in a process of its own (the test binary
// acting as benchctl), so a test can kill it.
type serveProc struct {
	cmd  *exec.Cmd
	url  string
	logs *bytes.Buffer
}

// freeAddr is a local address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// serveSetup is a test's store path and tokens file, with its spool and
// token in the environment.
func serveSetup(t *testing.T) (dir, db, tokens string) {
	t.Helper()
	dir = t.TempDir()
	tokens, tok := tokenFor(t, dir)
	t.Setenv("BENCHCTL_SPOOL", filepath.Join(dir, "spool"))
	t.Setenv("BENCHCTL_TOKEN", tok)
	return dir, filepath.Join(dir, "r.db"), tokens
}

func startServe(t *testing.T, dbPath, tokens, addr string) *serveProc {
	t.Helper()
	return startServeWith(t, nil, dbPath, tokens, addr)
}

// startServeWith starts serve under wrap (a command that execs its
// arguments), or directly when wrap is nil.
func startServeWith(t *testing.T, wrap []string, dbPath, tokens, addr string) *serveProc {
	t.Helper()
	exe, _ := os.Executable()
	if addr == "" {
		addr = freeAddr(t)
	}
	args := append(append([]string{}, wrap...), exe, "serve", "--store", "sqlite:"+dbPath, "--listen", addr, "--tokens", tokens, "--max-upload", "200000000")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "BENCHCTL_TEST_CLI=1")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, url: "http://" + addr, logs: &logs}
	t.Cleanup(func() { p.kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, "serving sqlite:") {
		t.Fatalf("serve did not start: %q %v\n%s", line, err, logs.String())
	}
	go io.Copy(io.Discard, stdout)
	return p
}

func (p *serveProc) kill() {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

func tokenFor(t *testing.T, dir string) (string, string) {
	t.Helper()
	path := filepath.Join(dir, "tokens.txt")
	code, stdout, stderr := benchctl(t, "token", "new", "--tokens", path, "--name", "ci")
	tok := strings.TrimSpace(stdout)
	if code != 0 || !strings.HasPrefix(tok, "lbt_") || !strings.Contains(stderr, "only its hash is kept") {
		t.Fatalf("token new: %d %q %q", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), tok) {
		t.Fatal("the tokens file holds the token")
	}
	return path, tok
}

// bigRun is a valid result file of n benchmarks, large enough that the
// server spends a while storing it.
func bigRun(machine string, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "machine-id: %s\nenv-id: e\ncommit: %040d\npkg: example.com/big\n\n", machine, n)
	for i := 0; i < n; i++ {
		for f := 1; f <= 3; f++ {
			fmt.Fprintf(&b, "BenchmarkBig/case=%d-2 1000 %d ns/op 16 B/op 1 allocs/op\n# benchctl: fork=%d iter=0\n", i, 100+i%17+f, f)
		}
	}
	return []byte(b.String())
}

func storeCounts(t *testing.T, dbPath string) (uploads, points int) {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q, _ := store.ParseQuery("")
	ups, err := st.ListUploads(context.Background(), q, nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := st.Machines(context.Background())
	for _, m := range ms {
		xs, _ := st.MachineSeries(context.Background(), m.ID)
		for _, x := range xs {
			points += x.Points
		}
	}
	return len(ups), points
}

// TestServerKilledMidUploadLosesAndDoublesNothing kills benchctl serve
// while it stores a large upload, then restarts it: the client spooled
// the upload, upload --pending delivers it, and the store holds it once,
// whole.
func TestServerKilledMidUploadLosesAndDoublesNothing(t *testing.T) {
	dir, db, tokens := serveSetup(t)
	tok := os.Getenv("BENCHCTL_TOKEN")
	srv := startServe(t, db, tokens, "")
	addr := strings.TrimPrefix(srv.url, "http://")

	// 1. A body cut off mid-file by the server's death stores nothing.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "half.txt")
	w.Write(bigRun("m-half", 2000))
	mw.WriteField("commit", "1")
	mw.Close()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /upload HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		addr, tok, mw.FormDataContentType(), body.Len())
	conn.Write(body.Bytes()[:body.Len()/2])
	time.Sleep(200 * time.Millisecond)
	srv.kill()
	conn.Close()

	// 2. A large upload through benchctl, with the server killed while
	// it receives or stores it: killed sooner after the upload starts
	// until the kill comes first (each try on a store of its own, so an
	// upload that finished leaves nothing behind in the next).
	file := filepath.Join(dir, "big.txt")
	data := bigRun("m-big", 20000)
	os.WriteFile(file, data, 0o644)
	type outcome struct {
		code   int
		stderr string
	}
	var first outcome
	for i, after := range []time.Duration{300 * time.Millisecond, 100 * time.Millisecond, 30 * time.Millisecond, 10 * time.Millisecond} {
		db = filepath.Join(dir, fmt.Sprintf("r%d.db", i))
		srv = startServe(t, db, tokens, addr)
		done := make(chan outcome)
		go func() {
			code, _, stderr := benchctl(t, "upload", "--server", srv.url, file)
			done <- outcome{code, stderr}
		}()
		time.Sleep(after) // not a wait for an event: the kill's moment
		srv.kill()
		if first = <-done; first.code != 0 {
			break
		}
	}
	if first.code == 0 {
		t.Fatalf("the upload finished within 10 ms of its start, before the kill\n%s", first.stderr)
	}
	if !strings.Contains(first.stderr, "spooled as") || !strings.Contains(first.stderr, "upload --pending") {
		t.Fatalf("a failed upload does not say it is spooled: %d\n%s", first.code, first.stderr)
	}
	if ups, _ := storeCounts(t, db); ups != 0 {
		t.Fatalf("%d uploads stored by killed servers (a half body, an unfinished transaction)", ups)
	}

	// 3. Restarted, the spool delivers it, once.
	srv = startServe(t, db, tokens, addr)
	code, _, stderr := benchctl(t, "upload", "--pending")
	if code != 0 || !strings.Contains(stderr, "retrying 1 spooled upload") || !strings.Contains(stderr, "uploaded [big.txt]") {
		t.Fatalf("upload --pending: %d\n%s\nserver:\n%s", code, stderr, srv.logs)
	}
	code, _, stderr = benchctl(t, "upload", "--server", srv.url, file)
	if code != 0 {
		t.Fatalf("re-upload: %d %s", code, stderr)
	}
	srv.kill()
	ups, pts := storeCounts(t, db)
	if ups != 1 || pts != 20000 {
		t.Errorf("%d uploads with %d points, want 1 with 20000", ups, pts)
	}
	if code, _, stderr := benchctl(t, "upload", "--pending"); code != 0 || !strings.Contains(stderr, "nothing pending") {
		t.Errorf("spool not empty: %d %s", code, stderr)
	}
}

// TestNightlyUploadsAndSurvivesAnUnreachableServer records nightly runs
// with --server: down, the run still succeeds locally and says so; up,
// the next run delivers both, and the dashboard lists the machine.
func TestNightlyUploadsAndSurvivesAnUnreachableServer(t *testing.T) {
	dir, db, tokens := serveSetup(t)
	addr := freeAddr(t)
	results := filepath.Join(dir, "results")
	nightlyTo := func() (int, string) {
		code, _, stderr := benchctl(t, "nightly", "--suite", "clitest", "--bench", "^BenchmarkNoop$", "--anchor", "none", "--allow-unpinned",
			"--forks", "1", "--warmup", "0", "--measure", "2x20ms", "--results", results, "--server", "http://"+addr, "--upload-timeout", "5s")
		return code, stderr
	}
	code, stderr := nightlyTo()
	if code != 0 || !strings.Contains(stderr, "failed") || !strings.Contains(stderr, "spooled as") {
		t.Fatalf("nightly with the server down: exit %d\n%s", code, stderr)
	}
	srv := startServe(t, db, tokens, addr)
	time.Sleep(1100 * time.Millisecond) // a nightly run is named by its second
	code, stderr = nightlyTo()
	if code != 0 || !strings.Contains(stderr, "retrying 1 spooled upload") || strings.Count(stderr, "uploaded ") != 2 {
		t.Fatalf("nightly with the server up: exit %d\n%s", code, stderr)
	}
	resp, err := http.Get(srv.url + "/api/machines")
	if err != nil {
		t.Fatal(err)
	}
	var ms []store.Machine
	json.NewDecoder(resp.Body).Decode(&ms)
	resp.Body.Close()
	if len(ms) != 1 || ms[0].Runs != 2 {
		t.Errorf("machines after two nightly runs: %+v", ms)
	}
	for _, bad := range [][]string{
		{"run", "--suite", "clitest", "--server", "ftp://x"},
		{"upload", "--server", srv.url},
		{"upload", "--pending", "file.txt"},
		{"upload", "--server", srv.url, dir},
		{"serve"},
		{"serve", "--store", "mysql://x"},
		{"serve", "--store", "sqlite:" + db, "--tokens", filepath.Join(dir, "none")},
		{"serve", "--store", "sqlite:" + db, "--public-url", "bench.example.com"},
		{"serve", "--store", "sqlite:" + db, "--max-upload", "0"},
		{"serve", "--store", "sqlite:" + db, "--max-conns-per-client", "-1"},
		{"serve", "--store", "sqlite:" + db, "--max-conns", "10", "--max-conns-per-client", "11"},
		{"token", "new"},
	} {
		if code, _, stderr := benchctl(t, bad...); code != 2 {
			t.Errorf("benchctl %v: exit %d, want 2\n%s", bad, code, stderr)
		}
	}
}

// TestStalledClientsDoNotStopTheServer: against a serve limited to 512
// file descriptors, 1,000 anonymous clients open connections and stall:
// half send an upload's headers and no body, half not even all the
// headers. /healthz and the home page still answer, and the stalled
// connections are cut off.
func TestStalledClientsDoNotStopTheServer(t *testing.T) {
	_, db, tokens := serveSetup(t)
	p := startServeWith(t, []string{"sh", "-c", `ulimit -n 512 && exec "$0" "$@"`}, db, tokens, "")
	limits, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", p.cmd.Process.Pid))
	if !regexp.MustCompile(`Max open files +512 +512`).Match(limits) {
		t.Fatalf("serve is not limited to 512 descriptors:\n%s", limits)
	}
	addr := strings.TrimPrefix(p.url, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 1000 {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("stalled connection %d: %v", i, err)
		}
		head := "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n"
		if i%2 == 1 {
			head = "GET /machine/x HTTP/1.1\r\nHost: x\r\nX-Slow: "
		}
		io.WriteString(c, head)
		conns = append(conns, c)
	}
	time.Sleep(1500 * time.Millisecond) // the stalled are quiet for longer than the limit's DefaultQuiet
	hc := &http.Client{Timeout: 5 * time.Second}
	for i := range 5 {
		for _, path := range []string{"/healthz", "/"} {
			resp, err := hc.Get(p.url + path)
			if err != nil {
				p.kill() // its log is complete, and no longer written
				t.Fatalf("%s, try %d, beside 1,000 stalled connections: %v\n%.3000s", path, i, err, p.logs.String())
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("%s, try %d: %d", path, i, resp.StatusCode)
			}
		}
	}
	// The stalled connections were closed by the server (the limit made
	// room, or their request was answered and the connection closed).
	cut := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		var ne net.Error
		if _, err := io.Copy(io.Discard, c); err == nil || !(errors.As(err, &ne) && ne.Timeout()) {
			cut++ // EOF, or a reset: closed by the server with their bytes unread
		}
	}
	t.Logf("%d of 1,000 stalled connections cut off", cut)
	if cut < 500 {
		t.Errorf("only %d of 1,000 stalled connections were cut off", cut)
	}
	p.kill()
	if strings.Contains(p.logs.String(), "too many open files") {
		t.Errorf("serve ran out of descriptors:\n%.3000s", p.logs.String())
	}
}

// TestUploadCommandBoundsAndSpool: upload reads only regular files (the
// client once read /dev/zero until the kernel killed it); its exit
// status is about its own files, while a damaged spool entry is set
// aside with the command to discard it; --pending --server names the
// uploads spooled for another server, and --move sends them; a revoked
// token is refused at once by the running server.
func TestUploadCommandBoundsAndSpool(t *testing.T) {
	dir, db, tokens := serveSetup(t)
	p := startServe(t, db, tokens, "")
	if code, _, stderr := benchctl(t, "upload", "--server", p.url, "/dev/zero"); code != 2 || !strings.Contains(stderr, "/dev/zero: a character device, not a regular file") {
		t.Errorf("upload /dev/zero: exit %d, %q", code, stderr)
	}
	file := func(n int) string {
		path := filepath.Join(dir, fmt.Sprintf("r%d.txt", n))
		os.WriteFile(path, fmt.Appendf(nil, "machine-id: m\ncommit: %d\nBenchmarkA-2 10 %d ns/op\n", n, 10+n), 0o600)
		return path
	}
	const dead = "http://127.0.0.1:1"
	code, _, stderr := benchctl(t, "upload", "--server", dead, "--upload-timeout", "5s", file(1))
	if code != 1 || !strings.Contains(stderr, "connection refused") || !strings.Contains(stderr, "spooled as") {
		t.Fatalf("upload to a closed port: exit %d\n%s", code, stderr)
	}
	// The count does not say how the uploads were kept: one not spooled
	// (an unwritable spool) would have been called spooled.
	if !strings.Contains(stderr, "1 upload(s) not delivered: each is said above") || strings.Contains(stderr, "(spooled)") {
		t.Errorf("upload to a closed port, the closing count:\n%s", stderr)
	}
	spool := os.Getenv("BENCHCTL_SPOOL")
	ents, _ := filepath.Glob(filepath.Join(spool, "*", "entry.json"))
	if len(ents) != 1 {
		t.Fatalf("spool entries %v", ents)
	}
	os.WriteFile(ents[0], []byte("{"), 0o600)
	code, _, stderr = benchctl(t, "upload", "--server", p.url, file(2))
	if code != 0 || !strings.Contains(stderr, "is damaged") || !strings.Contains(stderr, "rm -r "+filepath.Join(spool, "damaged")) || !strings.Contains(stderr, "uploaded ") {
		t.Errorf("own file delivered beside a damaged entry: exit %d, want 0\n%s", code, stderr)
	}
	if code, _, stderr := benchctl(t, "upload", "--server", dead, "--upload-timeout", "5s", file(3)); code != 1 {
		t.Fatalf("upload to a closed port: exit %d\n%s", code, stderr)
	}
	code, _, stderr = benchctl(t, "upload", "--pending", "--server", p.url)
	if code != 0 || !strings.Contains(stderr, "1 spooled for "+dead) || !strings.Contains(stderr, "--move") {
		t.Errorf("--pending --server of a server that moved: exit %d\n%s", code, stderr)
	}
	code, _, stderr = benchctl(t, "upload", "--pending", "--server", p.url, "--move")
	if code != 0 || !strings.Contains(stderr, "uploaded ") {
		t.Errorf("--pending --move: exit %d\n%s", code, stderr)
	}
	if up, _ := storeCounts(t, db); up != 2 {
		t.Errorf("%d uploads stored, want 2 (the damaged one set aside)", up)
	}
	// The server's warnings are printed: the same bytes renamed.
	copied := filepath.Join(dir, "copy.txt")
	b, _ := os.ReadFile(file(2))
	os.WriteFile(copied, b, 0o600)
	code, _, stderr = benchctl(t, "upload", "--server", p.url, copied)
	if code != 0 || !strings.Contains(stderr, "the server notes: copy.txt: the same bytes as") {
		t.Errorf("the same bytes under another name: exit %d, want the server's warning\n%s", code, stderr)
	}
	if code, _, stderr := benchctl(t, "token", "new", "--tokens", tokens, "--name", "box1", "--machine", "m1"); code != 0 || !strings.Contains(stderr, "for machine-ids m1 only") {
		t.Errorf("token new --machine: exit %d\n%s", code, stderr)
	}
	code, stdout, _ := benchctl(t, "token", "list", "--tokens", tokens)
	if code != 0 || !regexp.MustCompile(`(?m)^[0-9a-f]{12}  ci .* any machine$`).MatchString(stdout) || !regexp.MustCompile(`(?m)^[0-9a-f]{12}  box1 .* machines m1$`).MatchString(stdout) {
		t.Errorf("token list: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := benchctl(t, "token", "revoke", "--tokens", tokens, "ci"); code != 0 || !strings.Contains(stdout, "revoked ") {
		t.Errorf("token revoke: exit %d\n%s", code, stdout)
	}
	code, _, stderr = benchctl(t, "upload", "--server", p.url, file(4))
	if code != 1 || !strings.Contains(stderr, "401") {
		t.Errorf("upload with a revoked token: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := benchctl(t, "token", "revoke", "--tokens", tokens, "ci"); code != 1 || !strings.Contains(stderr, "no token is named") {
		t.Errorf("revoking it again: exit %d %q", code, stderr)
	}
}
