package benchctl

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
)

func (a *app) listCmd() *cobra.Command {
	var suite, bench string
	var asJSON bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "list [--suite S] [--bench RE] [--json] [PACKAGES...]",
		Short: "List benchmarks with their parameters and defaults (or the go test benchmarks of packages)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return a.listPackages(cmd, bench, timeout, asJSON, args)
			}
			if err := a.declaresNone(cmd.Name()); err != nil {
				return err
			}
			var re *regexp.Regexp
			if bench != "" {
				var err error
				if re, err = regexp.Compile(bench); err != nil {
					return usageError(fmt.Errorf("--bench %q: %w", bench, err))
				}
			}
			benches, err := engine.Select(a.registry, suite, re)
			if err != nil {
				return usageError(flagError(err))
			}
			if asJSON {
				out := make([]revision.Listed, len(benches))
				for i, b := range benches {
					out[i] = revision.Describe(b)
				}
				return writeJSON(a.stdout, out)
			}
			t := asciiTable(a.stdout)
			t.Header("Benchmark", "Package", "Suites", "Mode", "Goroutines", "Params (defaults)", "Description")
			for _, b := range benches {
				l := revision.Describe(b)
				var params []string
				for _, p := range l.Params {
					params = append(params, fmt.Sprintf("%s=%s (%s)", p.Name, strings.Join(p.Values, ","), p.Kind))
				}
				if err := t.Append(l.Name, l.Pkg, strings.Join(l.Suites, ","), l.Mode, fmt.Sprint(l.Goroutines), strings.Join(params, "; "), l.Doc); err != nil {
					return err
				}
			}
			return t.Render()
		},
	}
	c.Flags().StringVar(&suite, "suite", "all", "suite: "+strings.Join(engine.Suites(a.registry), ", "))
	c.Flags().StringVar(&bench, "bench", "", "regexp on benchmark names")
	c.Flags().BoolVar(&asJSON, "json", false, "print the benchmarks as JSON (id, name, pkg, suites, params)")
	c.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "with packages: kill a benchmark's listing process after this long")
	return c
}

// listPackages lists the go test benchmarks of the packages: every leaf
// that run would measure, after building the test binaries.
func (a *app) listPackages(cmd *cobra.Command, bench string, timeout time.Duration, asJSON bool, patterns []string) error {
	if cmd.Flags().Changed("suite") {
		return usageError(errors.New("--suite applies to registered benchmarks; go test benchmarks (package arguments) have no suites"))
	}
	o := engine.DefaultOptions()
	o.Bench, o.Timeout = bench, timeout
	tp, cleanup, err := a.planPackages(cmd.Context(), a.srcDir(), o, patterns)
	if err != nil {
		return err
	}
	defer cleanup()
	var out []revision.Listed
	for _, c := range tp.Cases {
		r := c.Result()
		out = append(out, revision.Listed{ID: r.ID, Name: r.Benchmark, Pkg: r.Pkg, Mode: string(result.AverageTime), Goroutines: c.Test.Procs})
	}
	if asJSON {
		return writeJSON(a.stdout, out)
	}
	t := asciiTable(a.stdout)
	t.Header("Benchmark", "Package", "-test.cpu")
	for _, l := range out {
		if err := t.Append(l.Name, l.Pkg, fmt.Sprint(l.Goroutines)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if len(tp.Broken) > 0 {
		return failedError(fmt.Sprintf("%d package(s) did not build: %s", len(tp.Broken), strings.Join(tp.Broken, ", ")))
	}
	return nil
}

// asciiTable is the plain ASCII table list prints.
func asciiTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
	)
}
