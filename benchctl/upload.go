package benchctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/upload"
)

// serverFlags are --server and --upload-timeout.
type serverFlags struct {
	server  string
	timeout time.Duration
}

func (f *serverFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.server, "server", "", "a benchctl serve URL to upload the results to after writing them (token from $"+payload.TokenEnv+")")
	c.Flags().DurationVar(&f.timeout, "upload-timeout", time.Minute, "how long one upload may take before it is spooled for later")
}

func (f *serverFlags) check() error {
	if f.server == "" {
		return nil
	}
	u, err := url.Parse(f.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--server %q: want an http:// or https:// URL", f.server)
	}
	if f.timeout <= 0 {
		return fmt.Errorf("--upload-timeout %s: must be positive", f.timeout)
	}
	return nil
}

// addServerFlags gives a measuring command --server: the result files it
// wrote are uploaded once it is done, whatever its outcome, after the
// spooled uploads to that server.
func (a *app) addServerFlags(c *cobra.Command) {
	var f serverFlags
	f.register(c)
	inner := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if err := f.check(); err != nil {
			return usageError(err)
		}
		a.written = nil
		err := inner(cmd, args)
		if f.server != "" && len(a.written) > 0 {
			a.uploadFiles(cmd.Context(), f, a.written)
		}
		return err
	}
}

func (a *app) spool(f serverFlags) (*upload.Spool, error) {
	dir, err := upload.DefaultSpool()
	if err != nil {
		return nil, err
	}
	return &upload.Spool{Dir: dir, Token: os.Getenv(payload.TokenEnv), Timeout: f.timeout}, nil
}

// uploadFiles flushes the spool for the server, then uploads each file as
// an upload of its own. Failures are reported, never fatal: the files are
// on disk and in the spool. It returns how many are still not delivered.
func (a *app) uploadFiles(ctx context.Context, f serverFlags, paths []string) int {
	sp, err := a.spool(f)
	if err != nil {
		a.say("upload: %v; the results are only in %v", err, paths)
		return len(paths)
	}
	// The spool's own failures are reported, and retried later; the
	// count is of this command's files.
	a.flush(ctx, sp, f.server, false)
	left := 0
	for _, p := range paths {
		data, err := readResultFile(p)
		if err != nil {
			a.say("upload %s: %v", p, err)
			left++
			continue
		}
		r := sp.Send(ctx, f.server, []payload.File{{Name: filepath.Base(p), Data: data}})
		if !a.reportUpload(sp, r, p) {
			left++
		}
	}
	return left
}

// readResultFile reads a file to upload: a regular file of at most
// payload.MaxUpload bytes, read no further than that.
func readResultFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s: %s, not a regular file", p, fileKind(st.Mode()))
	case st.Size() > payload.MaxUpload:
		return nil, fmt.Errorf("%s: %d bytes, over the upload limit of %d", p, st.Size(), payload.MaxUpload)
	}
	data, err := io.ReadAll(io.LimitReader(f, payload.MaxUpload+1))
	if err == nil && len(data) > payload.MaxUpload {
		err = fmt.Errorf("%s: grew past the upload limit of %d bytes while read", p, payload.MaxUpload)
	}
	return data, err
}

// flush retries the spooled uploads (to server, or all; with move, all
// to server) and returns how many it tried and how many remain.
func (a *app) flush(ctx context.Context, sp *upload.Spool, srv string, move bool) (tried, left int) {
	rs, err := sp.Flush(ctx, srv, move)
	if err != nil {
		a.say("upload: reading the spool %s: %v", sp.Dir, err)
		return 0, 0
	}
	if len(rs) > 0 {
		a.say("retrying %d spooled upload(s) from %s", len(rs), sp.Dir)
	}
	for _, r := range rs {
		if !a.reportUpload(sp, r, fmt.Sprint(r.Files)) {
			left++
		}
	}
	return len(rs), left
}

func (a *app) reportUpload(sp *upload.Spool, r upload.Result, what string) bool {
	switch {
	case r.Err == nil:
		a.say("uploaded %s to %s: upload %s (%s/upload/%s)", what, r.Server, r.ID, r.Server, r.ID)
		for _, w := range r.Warnings {
			a.say("  the server notes: %s", w)
		}
		return true
	case r.Damaged:
		a.say("spool entry %s is damaged: %v; set aside in %s, which nothing retries: look at it, then discard it with `rm -r %s`", r.ID, r.Err, r.Where, r.Where)
	case !r.Spooled:
		a.say("upload of %s to %s failed: %v; NOT spooled (%v): the results are only in %s", what, r.Server, r.Err, r.SpoolErr, what)
	case r.Rejected && r.Where != "":
		a.say("upload of %s refused by %s: %v; kept in %s", what, r.Server, r.Err, r.Where)
	case r.Rejected:
		a.say("upload of %s refused by %s: %v", what, r.Server, r.Err)
	default:
		a.say("upload of %s to %s failed: %v; spooled as %s: `%s upload --pending` or the next command with --server retries it",
			what, r.Server, r.Err, filepath.Join(sp.Dir, r.ID), a.name)
	}
	return false
}

func (a *app) uploadCmd() *cobra.Command {
	var f serverFlags
	var pending, move bool
	c := &cobra.Command{
		Use:   "upload --server URL FILE... | upload --pending [--server URL]",
		Short: "Upload result files to a benchctl serve, or retry the spooled uploads",
		Long: `upload sends each FILE (benchfmt results: bench.txt, ab.txt, nightly runs) to the server as an
upload of its own, after retrying the uploads spooled for that server. Each upload is spooled
before it is sent and leaves the spool only when the server has stored it; the server
deduplicates by content hash, so uploading a file twice stores it once. --pending retries the
spooled uploads only (of every server, or of --server; with --move, all of them to --server). A
spool entry that cannot be read is set aside in the spool's damaged/ directory, with the command to
discard it; one the server refuses for its content, in rejected/. A file is read up to the upload
limit (` + fmt.Sprint(payload.MaxUpload>>20) + ` MiB) and must be a regular file. The token comes from $` + payload.TokenEnv + `;
the spool is $` + upload.SpoolEnv + ` (default ~/.local/state/benchctl/spool). Exit 1 when an upload of
this command's files (with --pending, of the spool) is still not delivered.`,
		Example: fmt.Sprintf(`  %[1]s upload --server http://bench.internal:8080 results/nightly/*/2026/12/*.txt
  %[1]s upload --pending`, a.name),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return usageError(err)
			}
			if pending && len(args) > 0 {
				return usageError(errors.New("--pending retries the spool: give no files with it"))
			}
			if !pending && (f.server == "" || len(args) == 0) {
				return usageError(errors.New("want --server URL FILE..., or --pending"))
			}
			if move && !(pending && f.server != "") {
				return usageError(errors.New("--move goes with --pending --server URL"))
			}
			for _, p := range args {
				st, err := os.Stat(p)
				switch {
				case err != nil:
					return usageError(err)
				case !st.Mode().IsRegular():
					return usageError(fmt.Errorf("%s: %s, not a regular file: upload sends result files", p, fileKind(st.Mode())))
				case st.Size() > payload.MaxUpload:
					return usageError(fmt.Errorf("%s: %d bytes, over the upload limit of %d", p, st.Size(), payload.MaxUpload))
				}
			}
			var left int
			if pending {
				sp, err := a.spool(f)
				if err != nil {
					return failedError(err.Error())
				}
				var tried int
				tried, left = a.flush(cmd.Context(), sp, f.server, move)
				if tried == 0 {
					a.say("nothing pending in %s%s", sp.Dir, a.elsewhere(sp, f.server))
				}
			} else {
				left = a.uploadFiles(cmd.Context(), f, args)
			}
			if left > 0 {
				return failedError(fmt.Sprintf("%d upload(s) not delivered: each is said above (spooled for a retry, refused, or not spooled)", left))
			}
			return nil
		},
	}
	f.register(c)
	c.Flags().BoolVar(&pending, "pending", false, "retry the spooled uploads")
	c.Flags().BoolVar(&move, "move", false, "with --pending --server URL: send the uploads spooled for other servers to URL too (a server that moved)")
	return c
}

// elsewhere says which other servers have uploads spooled, when
// --pending --server found none for its own.
func (a *app) elsewhere(sp *upload.Spool, srv string) string {
	if srv == "" {
		return ""
	}
	var b strings.Builder
	for s, n := range sp.Servers() {
		fmt.Fprintf(&b, "; %d spooled for %s", n, s)
	}
	if b.Len() == 0 {
		return " for " + srv
	}
	return fmt.Sprintf(" for %s%s (`%s upload --pending` sends them there; --pending --server %s --move sends them to %s)", srv, b.String(), a.name, srv, srv)
}

// fileKind names what a file that is not a regular one is.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}
