package upload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
	"github.com/ledgerbench/ledgerbench/internal/payload"
)

// SpoolEnv names the spool directory, overriding the default
// ($XDG_STATE_HOME/benchctl/spool, else ~/.local/state/benchctl/spool).
const SpoolEnv = "BENCHCTL_SPOOL"

// DefaultSpool is the spool directory of this user.
func DefaultSpool() (string, error) {
	if d := os.Getenv(SpoolEnv); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "benchctl", "spool"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no spool directory: %v (set %s)", err, SpoolEnv)
	}
	return filepath.Join(home, ".local", "state", "benchctl", "spool"), nil
}

// Spool is a directory of uploads not yet acknowledged, one
// subdirectory per upload, named by its ID.
type Spool struct {
	Dir     string
	Token   string        // sent as Authorization: Bearer
	Timeout time.Duration // of one upload (default 60 s)
}

// entry is an upload's spool record.
type entry struct {
	Server   string    `json:"server"`
	Files    []string  `json:"files"` // names, in order; contents in 0, 1, …
	Created  time.Time `json:"created"`
	Attempts int       `json:"attempts"`
	Last     string    `json:"lastError,omitempty"`
}

// Result is what happened to one upload.
type Result struct {
	ID     string
	Server string
	Files  []string
	Err    error // nil: stored (or already stored) on the server
	// Spooled: the upload is durably in the spool (Send), so a failed
	// one is retried later; SpoolErr says why it could not be.
	Spooled  bool
	SpoolErr error
	Rejected bool // the server refused its content; moved to rejected/
	// Damaged: its spool entry cannot be read or its files do not hash
	// to its ID; it was moved to Where, and nothing retries it.
	Damaged bool
	Where   string
	// Warnings are the server's: what its series left out of a stored
	// upload, and why.
	Warnings []string
}

// Send spools files for server and sends them; it returns the upload's
// result, whose Err says why it is still spooled.
func (s *Spool) Send(ctx context.Context, server string, files []payload.File) Result {
	id := payload.UploadID(files)
	res := Result{ID: id, Server: server}
	for _, f := range files {
		res.Files = append(res.Files, f.Name)
	}
	// A spool that cannot be written does not stop the upload itself;
	// the result says it is not spooled.
	if err := s.write(id, server, files); err != nil {
		res.SpoolErr = err
	} else {
		res.Spooled = true
	}
	s.deliver(ctx, id, server, files, &res)
	return res
}

func (s *Spool) write(id, server string, files []payload.File) error {
	dir := filepath.Join(s.Dir, id)
	if _, err := os.Stat(filepath.Join(dir, "entry.json")); err == nil {
		return nil // spooled already (a retry of the same files)
	}
	tmp := filepath.Join(s.Dir, ".tmp-"+id+"-"+strconv.Itoa(os.Getpid()))
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	e := entry{Server: server, Created: time.Now().UTC()}
	for i, f := range files {
		e.Files = append(e.Files, f.Name)
		if err := atomicfile.Replace(filepath.Join(tmp, strconv.Itoa(i)), f.Data); err != nil {
			os.RemoveAll(tmp)
			return err
		}
	}
	b, _ := json.MarshalIndent(e, "", "  ")
	if err := atomicfile.Replace(filepath.Join(tmp, "entry.json"), b); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(dir, "entry.json")); serr == nil {
			return nil // another process spooled it meanwhile
		}
		return err
	}
	// Spooled only once the rename is durable.
	return atomicfile.SyncDir(s.Dir)
}

// deliver sends one upload and settles its spool entry.
func (s *Spool) deliver(ctx context.Context, id, server string, files []payload.File, res *Result) {
	a, err := s.post(ctx, server, files)
	dir := filepath.Join(s.Dir, id)
	switch {
	case err == nil && a.UploadID != id:
		err = fmt.Errorf("the server answered upload ID %s for files whose content hash gives %s: kept in the spool", a.UploadID, id)
	case err == nil:
		os.RemoveAll(dir)
		res.Err, res.Warnings = nil, a.Warnings
		return
	}
	res.Err = err
	var he *httpError
	if errors.As(err, &he) && (he.code == http.StatusBadRequest || he.code == http.StatusRequestEntityTooLarge) {
		res.Rejected = true
		rej := filepath.Join(s.Dir, rejectedDir, id)
		os.MkdirAll(filepath.Dir(rej), 0o700)
		os.RemoveAll(rej)
		if res.Spooled && os.Rename(dir, rej) == nil {
			os.WriteFile(filepath.Join(rej, "rejection.txt"), []byte(err.Error()+"\n"), 0o600)
			res.Where = rej
		}
		return
	}
	s.note(id, err)
}

// note records a failed attempt in the entry.
func (s *Spool) note(id string, err error) {
	p := filepath.Join(s.Dir, id, "entry.json")
	b, rerr := os.ReadFile(p)
	if rerr != nil {
		return
	}
	var e entry
	if json.Unmarshal(b, &e) != nil {
		return
	}
	e.Attempts++
	e.Last = err.Error()
	b, _ = json.MarshalIndent(e, "", "  ")
	atomicfile.Replace(p, b)
}

type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.code, http.StatusText(e.code), e.msg)
}

// maxAnswer bounds the part of an upload's answer that is read.
const maxAnswer = 1 << 20

// answer is the perfdata protocol's answer to an upload (its upload ID,
// file IDs and view URL), with the warnings of a stored upload.
type answer struct {
	UploadID string   `json:"uploadid"`
	FileIDs  []string `json:"fileids"`
	ViewURL  string   `json:"viewurl"`
	Warnings []string `json:"warnings"`
}

// post sends the files as one upload of the perfdata protocol: a POST of
// server/upload with a multipart form of "file" parts and a "commit"
// field, the token as a bearer. The form is written by a goroutine as the request reads it, so
// no upload is held in memory twice.
func (s *Spool) post(ctx context.Context, server string, files []payload.File) (*answer, error) {
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() { pw.CloseWithError(writeForm(mw, files)) }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(server, "/")+"/upload", pr)
	if err != nil {
		pr.Close()
		return nil, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	pr.Close()
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("no answer from %s within %s", server, timeout)
		}
		// "connection refused", named with the server.
		return nil, fmt.Errorf("%s: %w", server, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %w", server, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &httpError{code: resp.StatusCode, msg: strings.TrimSpace(string(body))}
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("%s answered the upload with no upload ID (%v)", server, err)
	}
	return &a, nil
}

// writeForm writes the files as the form's "file" parts, then the
// "commit" field that stores them (a form cut before it stores nothing),
// and closes it.
func writeForm(mw *multipart.Writer, files []payload.File) error {
	for _, f := range files {
		w, err := mw.CreateFormFile("file", f.Name)
		if err == nil {
			_, err = w.Write(f.Data)
		}
		if err != nil {
			return err
		}
	}
	if err := mw.WriteField("commit", "1"); err != nil {
		return err
	}
	return mw.Close()
}

// Pending lists the spooled uploads (for server, or all when empty),
// oldest first. An entry whose record cannot be read is listed too, for
// Flush to set aside as damaged.
func (s *Spool) Pending(server string) ([]string, error) {
	ents, err := os.ReadDir(s.Dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type p struct {
		id string
		t  time.Time
	}
	var ps []p
	for _, d := range ents {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") || d.Name() == rejectedDir || d.Name() == damagedDir {
			continue
		}
		e, err := s.read(d.Name())
		switch {
		case err != nil:
			ps = append(ps, p{d.Name(), time.Time{}})
		case server == "" || sameServer(e.Server, server):
			ps = append(ps, p{d.Name(), e.Created})
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].t.Before(ps[j].t) })
	out := make([]string, len(ps))
	for i, x := range ps {
		out[i] = x.id
	}
	return out, nil
}

// Servers counts the spooled uploads by the server they are for.
func (s *Spool) Servers() map[string]int {
	ids, _ := s.Pending("")
	n := map[string]int{}
	for _, id := range ids {
		if e, err := s.read(id); err == nil {
			n[strings.TrimSuffix(e.Server, "/")]++
		}
	}
	return n
}

func sameServer(a, b string) bool { return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/") }

// The spool's subdirectories of uploads that are not retried.
const (
	rejectedDir = "rejected" // refused by the server for their content
	damagedDir  = "damaged"  // unreadable, or files that do not hash to the ID
)

func (s *Spool) read(id string) (*entry, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, id, "entry.json"))
	if err != nil {
		return nil, err
	}
	var e entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("entry.json: %v", err)
	}
	if e.Server == "" || len(e.Files) == 0 {
		return nil, errors.New("entry.json names no server or no files")
	}
	return &e, nil
}

// Flush sends every spooled upload for server (or all when empty), each
// to the server it was spooled for; with move, every spooled upload goes
// to server instead, and its entry is rewritten to say so. A damaged
// entry is moved to the spool's damaged/ directory with the reason.
func (s *Spool) Flush(ctx context.Context, server string, move bool) ([]Result, error) {
	filter := server
	if move {
		filter = ""
	}
	ids, err := s.Pending(filter)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, id := range ids {
		e, files, err := s.load(id)
		if err != nil {
			out = append(out, s.damaged(id, e, err))
			continue
		}
		if move && !sameServer(e.Server, server) {
			e.Server = server
			b, _ := json.MarshalIndent(e, "", "  ")
			if err := atomicfile.Replace(filepath.Join(s.Dir, id, "entry.json"), b); err != nil {
				out = append(out, Result{ID: id, Server: server, Files: e.Files, Spooled: true, Err: fmt.Errorf("moving it to %s: %w", server, err)})
				continue
			}
		}
		res := Result{ID: id, Server: e.Server, Files: e.Files, Spooled: true}
		s.deliver(ctx, id, e.Server, files, &res)
		out = append(out, res)
	}
	return out, nil
}

// load reads a spooled upload whole and checks its files against its ID.
func (s *Spool) load(id string) (*entry, []payload.File, error) {
	e, err := s.read(id)
	if err != nil {
		return nil, nil, err
	}
	var files []payload.File
	for i, name := range e.Files {
		data, err := os.ReadFile(filepath.Join(s.Dir, id, strconv.Itoa(i)))
		if err != nil {
			return e, nil, fmt.Errorf("file %d (%s): %v", i, name, err)
		}
		files = append(files, payload.File{Name: name, Data: data})
	}
	if got := payload.UploadID(files); got != id {
		return e, nil, fmt.Errorf("its files hash to %s, not to its ID", got)
	}
	return e, files, nil
}

// damaged moves a damaged entry aside, where nothing retries it.
func (s *Spool) damaged(id string, e *entry, why error) Result {
	res := Result{ID: id, Damaged: true, Err: why}
	if e != nil {
		res.Server, res.Files = e.Server, e.Files
	}
	to := filepath.Join(s.Dir, damagedDir, id)
	os.MkdirAll(filepath.Dir(to), 0o700)
	os.RemoveAll(to)
	if err := os.Rename(filepath.Join(s.Dir, id), to); err != nil {
		res.Err = fmt.Errorf("%v; and it could not be moved aside: %v", why, err)
		res.Where = filepath.Join(s.Dir, id)
		return res
	}
	os.WriteFile(filepath.Join(to, "damage.txt"), []byte(why.Error()+"\n"), 0o600)
	res.Where = to
	return res
}
