package benchctl

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// Main runs the whole CLI over [harness.Default] with os.Args and returns
// the exit code: 0 ok, 1 a benchmark failed or a regression was found, 2
// bad usage. In a fork child (the same binary re-executed by a run) it runs
// the child's side instead. SIGINT and SIGTERM stop a run after the
// current fork, keeping every result obtained.
//
//	func main() { os.Exit(benchctl.Main()) }
func Main() int { return Config{}.Main() }

// Config is how a program embeds the CLI: another registry, another name
// in help and errors. Its zero value is what [Main] runs.
type Config struct {
	// Name is the program's name in help and errors (default: the base
	// name of os.Args[0]).
	Name string
	// Registry holds the benchmarks (default harness.Default).
	Registry *harness.Registry
	// Commands, when set, adds commands of the program's own beside the
	// measuring ones, made anew for each command tree of the program named
	// name. An error they return exits 2 unless it has an ExitCode() int
	// method, whose code is then the exit code. This repository's
	// cmd/benchctl adds the results server's serve and token this way, so
	// a benchmark program that leaves Commands nil links no database
	// driver.
	Commands func(name string) []*cobra.Command
	// Charts, when set, draw compare --chart's changes and nightly's
	// series (the package benchctl/charts has them). A program that leaves
	// them unset links no plotting package: its nightly README links no
	// chart, and compare --chart is refused.
	Charts *Charts
	// Home, when set, is the module path of the program's registered
	// benchmarks. Run from another module (or none), a measuring command
	// that would run them only by default (no package arguments, no
	// --suite or --bench) refuses and says how to measure that module's
	// own benchmarks instead: for a program installed as a general tool.
	Home string
}

// Main runs the CLI with c; see the package-level [Main].
func (c Config) Main() int {
	reg := c.Registry
	if reg == nil {
		reg = harness.Default
	}
	if engine.IsChild() {
		return engine.ChildMain(reg)
	}
	name := c.Name
	if name == "" {
		name = filepath.Base(os.Args[0])
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal stops the run after the current fork; a second
	// one, with the default handling restored, ends the process at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	a := &app{name: name, registry: reg, stdout: os.Stdout, stderr: os.Stderr, commands: c.Commands, home: c.Home, charts: c.Charts, fleet: ab.Fleets}
	return a.main(ctx, os.Args[1:])
}

// Charts draw what the commands chart.
type Charts struct {
	// Series draws a nightly series with its change points to path.
	Series func(path, title, unit string, values []float64, changePoints []int) error
	// Change draws each benchmark's change with its interval to path.
	Change func(path, title string, bars []compare.Bar) error
}
