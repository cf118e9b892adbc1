package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness"
)

func (a *app) listCmd() *cobra.Command {
	var suite, bench string
	c := &cobra.Command{
		Use:   "list [--suite S] [--bench RE]",
		Short: "List benchmarks with their parameters and defaults",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var re *regexp.Regexp
			if bench != "" {
				var err error
				if re, err = regexp.Compile(bench); err != nil {
					return usageError{fmt.Errorf("--bench %q: %w", bench, err)}
				}
			}
			benches, err := a.registry.Select(suite, re)
			if err != nil {
				return usageError{err}
			}
			t := tablewriter.NewTable(a.stdout,
				tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
				tablewriter.WithHeaderAutoFormat(tw.Off),
			)
			t.Header("Benchmark", "Family", "Suites", "Mode", "Goroutines", "Params (defaults)", "Description")
			for _, b := range benches {
				var params []string
				for _, p := range b.Params {
					params = append(params, fmt.Sprintf("%s=%s (%s)", p.Name, strings.Join(p.Values, ","), p.Kind))
				}
				mode := b.Mode
				if mode == "" {
					mode = harness.AverageTime
				}
				g := "1"
				if b.Goroutines > 0 {
					g = fmt.Sprint(b.Goroutines)
				}
				if err := t.Append(b.FullName(), b.Family, strings.Join(append([]string{"all"}, b.Suites...), ","), string(mode), g, strings.Join(params, "; "), b.Doc); err != nil {
					return err
				}
			}
			return t.Render()
		},
	}
	c.Flags().StringVar(&suite, "suite", "all", "suite: "+strings.Join(harness.Suites, ", "))
	c.Flags().StringVar(&bench, "bench", "", "regexp on benchmark names")
	return c
}
