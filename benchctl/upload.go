package benchctl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
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
			return usageError{err}
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
	_, left := a.flush(ctx, sp, f.server)
	for _, p := range paths {
		data, err := os.ReadFile(p)
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

// flush retries the spooled uploads (to server, or all) and returns how
// many it tried and how many remain.
func (a *app) flush(ctx context.Context, sp *upload.Spool, srv string) (tried, left int) {
	rs, err := sp.Flush(ctx, srv)
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
		return true
	case r.Rejected:
		a.say("upload of %s refused by %s: %v; kept in %s", what, r.Server, r.Err, filepath.Join(sp.Dir, "rejected", r.ID))
	default:
		a.say("upload of %s to %s failed: %v; spooled as %s: `%s upload --pending` or the next command with --server retries it",
			what, r.Server, r.Err, filepath.Join(sp.Dir, r.ID), a.name)
	}
	return false
}

func (a *app) uploadCmd() *cobra.Command {
	var f serverFlags
	var pending bool
	c := &cobra.Command{
		Use:   "upload --server URL FILE... | upload --pending [--server URL]",
		Short: "Upload result files to a benchctl serve, or retry the spooled uploads",
		Long: `upload sends each FILE (benchfmt results: bench.txt, ab.txt, nightly runs) to the server as an
upload of its own, after retrying the uploads spooled for that server. Each upload is spooled
before it is sent and leaves the spool only when the server has stored it; the server
deduplicates by content hash, so uploading a file twice stores it once. --pending retries the
spooled uploads only (of every server, or of --server). The token comes from $` + payload.TokenEnv + `;
the spool is $` + upload.SpoolEnv + ` (default ~/.local/state/benchctl/spool). Exit 1 when an upload is
still not delivered.`,
		Example: fmt.Sprintf(`  %[1]s upload --server http://bench.internal:8080 results/nightly/*/2026/12/*.txt
  %[1]s upload --pending`, a.name),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return usageError{err}
			}
			if pending && len(args) > 0 {
				return usageError{errors.New("--pending retries the spool: give no files with it")}
			}
			if !pending && (f.server == "" || len(args) == 0) {
				return usageError{errors.New("want --server URL FILE..., or --pending")}
			}
			for _, p := range args {
				if st, err := os.Stat(p); err != nil || st.IsDir() {
					return usageError{fmt.Errorf("%s: not a result file", p)}
				}
			}
			var left int
			if pending {
				sp, err := a.spool(f)
				if err != nil {
					return failedError{err.Error()}
				}
				var tried int
				tried, left = a.flush(cmd.Context(), sp, f.server)
				if tried == 0 {
					a.say("nothing pending in %s", sp.Dir)
				}
			} else {
				left = a.uploadFiles(cmd.Context(), f, args)
			}
			if left > 0 {
				return failedError{fmt.Sprintf("%d upload(s) not delivered (spooled)", left)}
			}
			return nil
		},
	}
	f.register(c)
	c.Flags().BoolVar(&pending, "pending", false, "retry the spooled uploads")
	return c
}
