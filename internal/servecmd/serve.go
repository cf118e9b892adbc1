package servecmd

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os/signal"
	"strings"
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
	var spec, listen, tokens, publicURL string
	var maxUpload int64
	var maxConns, perClient int
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
server is read-only, and a tokens file that becomes unreadable refuses every upload until it is
repaired. Each request's body must arrive within 30 s (an authenticated upload's within 10 min), an
answer be written within 2 min, and idle connections close after a minute; --max-conns bounds the
connections, so that clients who open many and send nothing cannot take the descriptors of the
others, and --max-conns-per-client those of one address, so that one client's flood takes no room
from the rest. /healthz answers ok only while the store answers. A query word is key:value, key<value or key>value over configuration keys
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
			if err := checkLimits(maxUpload, maxConns, perClient, publicURL); err != nil {
				return usageError(err)
			}
			logger := log.New(cmd.ErrOrStderr(), name+" serve: ", log.LstdFlags)
			var toks *server.Tokens
			if tokens != "" {
				var err error
				if toks, err = server.LoadTokens(tokens); err != nil {
					return usageError(err)
				}
				toks.Log = logger
			}
			return serve(cmd, logger, serveConfig{spec: spec, listen: listen, tokens: tokens, publicURL: publicURL, maxUpload: maxUpload, maxConns: maxConns, perClient: perClient}, toks)
		},
	}
	c.Flags().StringVar(&spec, "store", "", storeHelp)
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "the address to serve on")
	c.Flags().StringVar(&tokens, "tokens", "", "the upload tokens file (made by token new); without it, no uploads")
	c.Flags().Int64Var(&maxUpload, "max-upload", server.DefaultMaxUpload, "the largest upload body, in bytes")
	c.Flags().StringVar(&publicURL, "public-url", "", "the server's address as readers reach it (https://bench.example.com): an upload's answer links its page there; without it, at the Host the uploader asked for")
	c.Flags().IntVar(&maxConns, "max-conns", 0, "the most connections open at once; a new one takes the place of the one quiet the longest (0: the descriptor limit less a reserve for the store)")
	c.Flags().IntVar(&perClient, "max-conns-per-client", 0, "the most connections open at once from one address; past it, its new one takes the place of its own quietest (0: a quarter of --max-conns)")
	return c
}

// serveConfig is serve's flags.
// checkLimits refuses serve's limits and public URL when they are out of
// range.
func checkLimits(maxUpload int64, maxConns, perClient int, publicURL string) error {
	if maxUpload <= 0 {
		return fmt.Errorf("--max-upload %d: must be positive", maxUpload)
	}
	if maxConns < 0 {
		return fmt.Errorf("--max-conns %d: want 0 (from the descriptor limit) or more", maxConns)
	}
	if perClient < 0 || maxConns > 0 && perClient > maxConns {
		return fmt.Errorf("--max-conns-per-client %d: want 0 (a quarter of --max-conns) to --max-conns", perClient)
	}
	if publicURL != "" {
		if err := server.CheckPublicURL(publicURL); err != nil {
			return fmt.Errorf("--public-url %w", err)
		}
	}
	return nil
}

type serveConfig struct {
	spec, listen, tokens, publicURL string
	maxUpload                       int64
	maxConns, perClient             int
}

// serve opens the store and serves it until a signal.
func serve(cmd *cobra.Command, logger *log.Logger, c serveConfig, toks *server.Tokens) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	st, err := store.Open(ctx, c.spec)
	if err != nil {
		return failedError(err.Error())
	}
	defer st.Close()
	raw, err := net.Listen("tcp", c.listen)
	if err != nil {
		return failedError(fmt.Sprintf("--listen %s: %v", c.listen, err))
	}
	maxConns := c.maxConns
	if maxConns == 0 {
		maxConns = connsFromLimit()
	}
	perClient := c.perClient
	if perClient == 0 {
		perClient = max(maxConns/4, 1)
	}
	ln := server.LimitConns(raw, maxConns, perClient, server.DefaultQuiet)
	srv := &server.Server{Store: st, Tokens: toks, MaxUpload: c.maxUpload, Log: logger, PublicURL: c.publicURL}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute,
		MaxHeaderBytes: 64 << 10, ErrorLog: logger}
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
		mode = "uploads with a token from " + c.tokens
	}
	fmt.Fprintf(cmd.OutOrStdout(), "serving %s (%s) on http://%s (%s; at most %d connections, %d from one address)\n", st, st.Dialect(), ln.Addr(), mode, maxConns, perClient)
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
}

// connReserve is the descriptors kept for the store, its files and logs.
const connReserve = 64

// connsFromLimit is the connection limit the process's descriptor limit
// allows.
func connsFromLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<20 {
		return 4096
	}
	return max(int(rl.Cur)-connReserve, 8)
}

// needTokens refuses a token command without --tokens.
func needTokens(path string) error {
	if path == "" {
		return usageError(errors.New("--tokens is required: the file serve --tokens reads"))
	}
	return nil
}

func tokenCmd(prog string) *cobra.Command {
	c := &cobra.Command{
		Use:   "token",
		Short: "Manage upload tokens of benchctl serve",
	}
	c.AddCommand(newTokenCmd(prog), listTokensCmd(prog), revokeTokenCmd())
	return c
}

func newTokenCmd(prog string) *cobra.Command {
	var tokens, tokName string
	var machines []string
	c := &cobra.Command{
		Use:   "new --tokens FILE [--name NAME] [--machine ID]...",
		Short: "Make an upload token: print it once and keep only its hash in FILE",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := needTokens(tokens); err != nil {
				return err
			}
			tok, err := server.NewToken(tokens, tokName, machines...)
			if err != nil {
				return usageError(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			bound := ""
			if len(machines) > 0 {
				bound = ", for machine-ids " + strings.Join(machines, ", ") + " only"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: token %q added to %s%s (only its hash is kept: it is shown this once); clients send it from $%s\n", prog, tokName, tokens, bound, payload.TokenEnv)
			return nil
		},
	}
	c.Flags().StringVar(&tokens, "tokens", "", "the tokens file")
	c.Flags().StringVar(&tokName, "name", "uploader", "who or what uploads with the token (one word)")
	c.Flags().StringArrayVar(&machines, "machine", nil, "bind the token to this machine-id (repeatable): an upload with a file of any other is refused (403)")
	return c
}

func listTokensCmd(prog string) *cobra.Command {
	var tokens string
	c := &cobra.Command{
		Use:   "list --tokens FILE",
		Short: "List the tokens of FILE: ID (the start of its hash), name, when it was made and the machines it is bound to",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := needTokens(tokens); err != nil {
				return err
			}
			ts, err := server.ReadTokens(tokens)
			if err != nil {
				return failedError(err.Error())
			}
			w := cmd.OutOrStdout()
			for _, t := range ts {
				bound := "any machine"
				if len(t.Machines) > 0 {
					bound = "machines " + strings.Join(t.Machines, ",")
				}
				fmt.Fprintf(w, "%s  %-20s %-20s %s\n", t.ID(), t.Name, t.Made, bound)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d tokens in %s\n", prog, len(ts), tokens)
			return nil
		},
	}
	c.Flags().StringVar(&tokens, "tokens", "", "the tokens file")
	return c
}

func revokeTokenCmd() *cobra.Command {
	var tokens string
	c := &cobra.Command{
		Use:   "revoke --tokens FILE NAME|ID",
		Short: "Revoke the tokens named NAME, or the one whose ID (token list) begins with ID (4 hex digits or more); a running serve refuses them at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := needTokens(tokens); err != nil {
				return err
			}
			gone, err := server.RevokeTokens(tokens, args[0])
			if err != nil {
				return failedError(err.Error())
			}
			for _, t := range gone {
				fmt.Fprintf(cmd.OutOrStdout(), "revoked %s  %s %s\n", t.ID(), t.Name, t.Made)
			}
			return nil
		},
	}
	c.Flags().StringVar(&tokens, "tokens", "", "the tokens file")
	return c
}
