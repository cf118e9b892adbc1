package benchctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks bad input: exit code 2.
func usageError(err error) error { return session.UsageError{Err: err} }

// failedError marks a run that ran but failed (or regressed): exit 1.
func failedError(msg string) error { return session.FailedError{Msg: msg} }

// app carries what the commands share.
type app struct {
	name     string // the program's name in help and errors
	registry *harness.Registry
	stdout   io.Writer
	stderr   io.Writer
	// runner settings, replaced by tests
	executable string
	childArgs  []string
	childEnv   []string
	dir        string // the user's source tree ("" = cwd)
	args       []string
	// header, when set, edits the collected header (tests pin host values).
	header func(*report.Header)
	// host, when set, replaces the local host (tests feed fixtures).
	host func() *hostcheck.Host
	// now, when set, replaces the clock that names recorded runs.
	now func() time.Time
	// written lists the result files the command wrote, for --server.
	written []string
	// commands adds the program's own commands (Config.Commands).
	commands func(name string) []*cobra.Command
	// home is the module the registered benchmarks belong to
	// (Config.Home).
	home string
	// charts draw, when set (Config.Charts).
	charts *Charts
	// fleet connects ab --fleet, when the program links a fleet client
	// (ab.Fleets).
	fleet func(ctx context.Context, o ab.FleetOptions) (ab.Remote, io.Closer, error)
}

// srcDir is the user's source tree.
func (a *app) srcDir() string { return session.SourceDir(a.dir) }

func (a *app) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

func (a *app) main(ctx context.Context, args []string) int {
	if a.name == "" {
		a.name = "benchctl"
	}
	a.args = args
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(a.stderr, "%s: %s\n", a.name, flagWords(err))
	var fe session.FailedError
	if errors.As(err, &fe) {
		return exitFailure
	}
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return exitUsage
}

// say prints one line of the program's own commentary to stderr.
func (a *app) say(format string, args ...any) {
	fmt.Fprintf(a.stderr, a.name+": "+format+"\n", args...)
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   a.name,
		Short: "Run this program's benchmarks with JMH's semantics in forked worker processes",
		Long: a.name + ` runs the benchmarks this program registers (package harness), or the testing.B
benchmarks of the packages it is given (` + "`" + a.name + ` run ./...` + "`" + `), in forked worker
processes (warmup and measurement iterations, modes avgt/thrpt/sample/ss, parameters,
goroutine groups), checks and pins the host, profiles one benchmark at a time, and writes
DIR/bench.txt (Go benchmark format, readable by benchstat) and DIR/bench.json (JMH's result
schema). compare, ab and nightly turn results into pull-request tables and history.

Exit codes: 0 ok, 1 a benchmark failed or a regression was found, 2 bad usage.`,
		Version:       report.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError(fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath()))
	})
	root.AddCommand(a.listCmd(), a.runCmd(), a.checkCmd(), a.tuneCmd(), a.resetCmd(), a.compareCmd(), a.abCmd(), a.nightlyCmd(), a.bisectCmd(), a.calibrateCmd(),
		a.uploadCmd())
	if a.commands != nil {
		root.AddCommand(a.commands(a.name)...)
	}
	return root
}

// flags names the library's options (as session.InputError words them)
// by this command line's flags.
var flags = map[string]string{"Base": "--base", "Head": "--head", "AllowDirty": "--allow-dirty", "Program": "--cmd", "Forks": "--forks",
	"Profiles": "--prof", "Bench": "--bench", "Duet": "--duet", "Good": "--good", "Bad": "--bad", "Direction": "--direction",
	"Metric": "--metric", "Alpha": "--alpha", "MinChange": "--min-change", "Out": "--out", "CPUs": "--cpus", "Anyway": "--anyway", "UntilDecided": "--until-decided", "Explain": "--explain", "ExplainRounds": "--explain-rounds",
	"LockWait": "--wait-lock", "IgnoreLock": "--ignore-lock", "AllowUnpinned": "--allow-unpinned"}

// flagName is the flag of a library option (as session.InputError names
// it).
func flagName(option string) string {
	if f, ok := flags[option]; ok {
		return f
	}
	return "--" + strings.ToLower(option)
}

// flagWords is err's message with the options of its input error named
// by their flags.
func flagWords(err error) string { return session.Words(err, flagName) }
