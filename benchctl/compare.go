package benchctl

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

func (a *app) compareCmd() *cobra.Command {
	var o compare.Options
	var format, names, chartPath string
	c := &cobra.Command{
		Use:   "compare [flags] FILE...",
		Short: "Compare Go benchmark-format files: each row's verdict as a pull-request Markdown table or CSV, or benchstat's text",
		Example: `  benchctl compare old/bench.txt new/bench.txt
  benchctl compare --col /impl --format md --names "Master,This change" results/runs/x/bench.txt
  benchctl compare --format md --min-change 2 base=a.txt head=b.txt
  benchctl compare --format gotest new/bench.txt > new.txt && benchstat old-go-test.txt new.txt`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			return a.compare(cmd, files, o, format, names, chartPath)
		},
	}
	fl := c.Flags()
	fl.StringVar(&o.Col, "col", ".file", "split columns by this projection (.file, /impl, toolchain, …); the first column is the baseline")
	fl.StringVar(&o.Row, "row", ".fullname", "split rows by this projection")
	fl.StringVar(&o.Table, "table", ".config", "split tables by this projection")
	fl.StringVar(&o.Filter, "filter", "*", "benchproc filter of the results to compare")
	fl.StringVar(&o.Ignore, "ignore", "", "ignore variations in these keys when grouping (machine,env-id,host-pinned: the files of several hosts of one class, whose pairs are then strata of one row)")
	fl.Float64Var(&o.Alpha, "alpha", compare.DefaultAlpha, "significance level: the verdicts' false-discovery rate across a unit's rows, and the level of benchstat's test in the text output")
	fl.Float64Var(&o.Confidence, "confidence", 0.95, "confidence level of the text format's (benchstat's) summary intervals")
	fl.Float64Var(&o.MinChange, "min-change", compare.DefaultMinChange, "the margin of the verdicts, in percent: a smaller change is none, and an interval within ± it is \"same\"")
	fl.StringVar(&o.Samples, "samples", compare.Forks, "unit of replication: fork (one sample per fork of a benchctl file, the median of its iterations) or iteration (one per result line, benchstat's numbers)")
	fl.StringVar(&format, "format", "text", "text, csv, md, json (the verdicts, schema "+compare.JSONSchema+"), or gotest: the files' results as go test -bench writes them (its keys, no comments), for benchstat beside a go test file")
	fl.StringVar(&chartPath, "chart", "", "also draw the change of the second column per benchmark, with whiskers, to this .svg or .png")
	fl.StringVar(&names, "names", "", "column names, comma-separated, baseline first (\"Master,This change\")")
	return c
}

// compare runs compare over files with the bound flags.
func (a *app) compare(cmd *cobra.Command, files []string, o compare.Options, format, names, chartPath string) error {
	var nameList []string
	if names != "" {
		nameList = strings.Split(names, ",")
	}
	if cmd.Flags().Changed("table") && o.Table == "" {
		// benchstat's -table "": one table per unit, whatever the
		// files' configurations (a go test file beside a benchctl
		// one, say).
		o.Table = compare.OneTable
	}
	if err := checkStats(o.Alpha, o.MinChange); err != nil {
		return err
	}
	if o.Samples != compare.Forks && o.Samples != compare.Iterations {
		return usageError(fmt.Errorf("--samples %q: want %s or %s", o.Samples, compare.Forks, compare.Iterations))
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		return usageError(fmt.Errorf("--confidence %g: must be between 0 and 1", o.Confidence))
	}
	if format == "gotest" {
		// The results as go test wrote them, for benchstat.
		if err := compare.GoTest(a.stdout, files); err != nil {
			return usageError(err)
		}
		return nil
	}
	render := map[string]func(*compare.Tables) error{
		"text": func(t *compare.Tables) error { return t.Text(a.stdout, nameList) },
		"csv":  func(t *compare.Tables) error { return t.CSV(a.stdout, nameList) },
		"md":   func(t *compare.Tables) error { return t.Markdown(a.stdout, nameList) },
		"json": func(t *compare.Tables) error { return writeJSON(a.stdout, t.Verdicts(nameList)) },
	}[format]
	if render == nil {
		return usageError(fmt.Errorf("--format %q: valid formats are text, csv, md, json, gotest", format))
	}
	tables, err := compare.Build(files, o)
	if err != nil {
		return usageError(err)
	}
	if len(tables.Tables) == 0 {
		return failedError("no benchmark results in " + strings.Join(files, ", "))
	}
	if err := render(tables); err != nil {
		return failedError(err.Error())
	}
	if len(tables.Damaged) > 0 {
		return failedError(strings.Join(tables.Damaged, "; "))
	}
	if chartPath != "" {
		return a.compareChart(tables, chartPath, nameList)
	}
	return nil
}

// compareChart draws the change of the second column against the first,
// per benchmark, into path.
func (a *app) compareChart(tables *compare.Tables, path string, nameList []string) error {
	if a.charts == nil || a.charts.Change == nil {
		return usageError(fmt.Errorf("--chart: %s draws no charts (a program opts in with benchctl.Config{Charts: charts.Draw}, package benchctl/charts)", a.name))
	}
	unit, bars := tables.ChangeBars(1)
	if len(bars) == 0 {
		return failedError("--chart: no time or throughput rows present in both of the first two columns")
	}
	title := fmt.Sprintf("%s against %s: change in %s (whiskers: slowest to fastest runs)", tables.ColName(1, nameList), tables.ColName(0, nameList), unit)
	if err := a.charts.Change(path, title, bars); err != nil {
		return failedError(err.Error())
	}
	a.say("chart written to %s", path)
	return nil
}

// checkStats refuses a significance level or a margin out of range.
func checkStats(alpha, minChange float64) error { return session.CheckVerdicts(alpha, minChange) }
