package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/report"
)

// Exit codes of DESIGN.md §1.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks bad input: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// failedError marks a run that ran but failed (or regressed): exit 1.
type failedError struct{ msg string }

func (e failedError) Error() string { return e.msg }

// app carries what the commands share.
type app struct {
	registry *harness.Registry
	stdout   io.Writer
	stderr   io.Writer
	// runner settings, replaced by tests
	executable string
	childArgs  []string
	childEnv   []string
	dir        string // source tree for the commit keys ("" = cwd)
	args       []string
	// header, when set, edits the collected header (tests pin host values).
	header func(*report.Header)
	// host, when set, replaces the local host (tests feed fixtures).
	host func() *hostcheck.Host
}

// run is the whole CLI: it parses args, runs the command, and returns the
// exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return (&app{registry: harness.Default, stdout: stdout, stderr: stderr}).main(ctx, args)
}

func (a *app) main(ctx context.Context, args []string) int {
	a.args = args
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(a.stderr, "benchctl:", err)
	var fe failedError
	if errors.As(err, &fe) {
		return exitFailure
	}
	return exitUsage
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "benchctl",
		Short: "Run ledgerbench's benchmark families with JMH's semantics",
		Long: `benchctl runs the benchmark families of ledgerbench in forked worker processes
(warmup and measurement iterations, modes avgt/thrpt/sample/ss, parameters,
goroutine groups) and writes DIR/bench.txt (Go benchmark format, readable by
benchstat) and DIR/bench.json (JMH's result schema).

Exit codes: 0 ok, 1 a benchmark failed, 2 bad usage.`,
		Version:       report.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath())}
	})
	root.AddCommand(a.listCmd(), a.runCmd(), a.checkCmd(), a.tuneCmd(), a.resetCmd(), a.compareCmd(), a.abCmd(), a.nightlyCmd())
	return root
}
