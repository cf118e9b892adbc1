package servecmd

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/server"
	"github.com/ledgerbench/ledgerbench/internal/store"
)

const storeHelp = "the results store: sqlite:PATH (one file, no server) or postgres://USER@HOST:PORT/DB"

// Commands are serve and token of the program named name, made anew for
// each command tree: pass it as benchctl.Config's Commands.
func Commands(name string) []*cobra.Command { return []*cobra.Command{serveCmd(name), tokenCmd(name)} }

// exitError is an error with the exit code benchctl's Main returns.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// ExitCode is 1 for a command that ran and failed, 2 for bad usage.
func (e exitError) ExitCode() int { return e.code }

func usageError(err error) error   { return exitError{2, err} }
func failedError(msg string) error { return exitError{1, errors.New(msg)} }

// serveExample is serve's examples in the program named name.
func serveExample(name string) string {
	return fmt.Sprintf(`  %[1]s token new --tokens tokens.txt --name nightly-box1
  %[1]s serve --store sqlite:results.db --listen 127.0.0.1:8080 --tokens tokens.txt
  %[1]s serve --store postgres://bench@db.internal:5432/results --listen :8080 --tokens tokens.txt`, name)
}

func serveCmd(name string) *cobra.Command {
	var spec, listen, tokens string
	var maxUpload int64
	c := &cobra.Command{
		Use:   "serve --store sqlite:PATH|postgres://… [--listen ADDR] [--tokens FILE]",
		Short: "Serve a results store: uploads (x/perf's perfdata protocol), a JSON API and the dashboard",
		Long: `serve opens (and migrates) a results store and serves it over HTTP:

  POST /upload, GET /search?q=, GET /uploads     golang.org/x/perf/storage's perfdata protocol
  GET /api/machines, /api/series, /api/changepoints, /api/across   JSON
  GET /, /machine/ID, /series, /across, /upload/ID                 the dashboard

The raw files are kept exactly as uploaded; machines, series and change points are an index
rebuilt from them. After each upload the machine's series are analyzed (E-divisive change
points, as nightly computes them) in the background. Reads are anonymous; uploads need a token
from --tokens (benchctl token new), sent as Authorization: Bearer TOKEN. Without --tokens the
server is read-only. A query word is key:value, key<value or key>value over configuration keys
(machine-id, commit, pkg, …), upload labels, name (a benchmark's base name) and /key (its name
keys); anything else is refused with 400.`,
		Example: serveExample(name),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if spec == "" {
				return usageError(errors.New("--store is required: " + storeHelp))
			}
			if _, _, err := store.ParseSpec(spec); err != nil {
				return usageError(err)
			}
			if maxUpload <= 0 {
				return usageError(fmt.Errorf("--max-upload %d: must be positive", maxUpload))
			}
			var toks *server.Tokens
			if tokens != "" {
				var err error
				if toks, err = server.LoadTokens(tokens); err != nil {
					return usageError(err)
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			st, err := store.Open(ctx, spec)
			if err != nil {
				return failedError(err.Error())
			}
			defer st.Close()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return failedError(fmt.Sprintf("--listen %s: %v", listen, err))
			}
			logger := log.New(cmd.ErrOrStderr(), name+" serve: ", log.LstdFlags)
			srv := &server.Server{Store: st, Tokens: toks, MaxUpload: maxUpload, Log: logger}
			hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
			go srv.Run(ctx)
			// Series left pending by an earlier server are analyzed now.
			go func() {
				if n, err := st.Analyze(ctx, ""); err != nil {
					logger.Printf("analyzing pending series: %v", err)
				} else if n > 0 {
					logger.Printf("analyzed %d pending series", n)
				}
			}()
			mode := "read-only: no --tokens"
			if toks != nil {
				mode = "uploads with a token from " + tokens
			}
			fmt.Fprintf(cmd.OutOrStdout(), "serving %s (%s) on http://%s (%s)\n", st, st.Dialect(), ln.Addr(), mode)
			errc := make(chan error, 1)
			go func() { errc <- hs.Serve(ln) }()
			select {
			case err := <-errc:
				return failedError(err.Error())
			case <-ctx.Done():
			}
			shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			hs.Shutdown(shut)
			return nil
		},
	}
	c.Flags().StringVar(&spec, "store", "", storeHelp)
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "the address to serve on")
	c.Flags().StringVar(&tokens, "tokens", "", "the upload tokens file (made by token new); without it, no uploads")
	c.Flags().Int64Var(&maxUpload, "max-upload", server.DefaultMaxUpload, "the largest upload body, in bytes")
	return c
}

func tokenCmd(prog string) *cobra.Command {
	c := &cobra.Command{
		Use:   "token",
		Short: "Manage upload tokens of benchctl serve",
	}
	var tokens, tokName string
	newCmd := &cobra.Command{
		Use:   "new --tokens FILE [--name NAME]",
		Short: "Make an upload token: print it once and keep only its hash in FILE",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if tokens == "" {
				return usageError(errors.New("--tokens is required: the file serve --tokens reads"))
			}
			tok, err := server.NewToken(tokens, tokName)
			if err != nil {
				return usageError(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: token %q added to %s (only its hash is kept: it is shown this once); clients send it from $%s\n", prog, tokName, tokens, payload.TokenEnv)
			return nil
		},
	}
	newCmd.Flags().StringVar(&tokens, "tokens", "", "the tokens file")
	newCmd.Flags().StringVar(&tokName, "name", "uploader", "who or what uploads with the token (one word)")
	c.AddCommand(newCmd)
	return c
}
