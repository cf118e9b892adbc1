package axis

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// Tables are the run's pull-request tables, one per implementation
// axis its benchmarks declare (harness.Param.Baseline): every other value
// of the axis against the declared baseline, per benchmark, with
// fork-level statistics, decided by the anytime-valid test when
// sequential; the run's benchmarks without the axis (floors, no-ops)
// follow in each as the distance to the limit. data is the run's results
// file.
func Tables(data []byte, cases []result.Case, sequential bool) ([]Table, error) {
	return tables(cases, func(o compare.Options) (*compare.Tables, error) {
		o.Sequential = sequential
		return compare.BuildData("bench.txt", data, o)
	})
}

// TablesOf are Tables of a run measured on several machines, each
// machine's results file one of paths: a file is a stratum (a group's
// cases were measured on one machine, pairs by round), and the keys in
// which machines of a class differ are ignored (compare.HostKeys);
// decided by the anytime-valid test when sequential.
func TablesOf(paths []string, cases []result.Case, sequential bool) ([]Table, error) {
	return tables(cases, func(o compare.Options) (*compare.Tables, error) {
		o.Ignore, o.Sequential = compare.HostKeys, sequential
		return compare.Build(paths, o)
	})
}

// tables builds each axis's table of cases with build, given the axis's
// column, baseline and filter.
func tables(cases []result.Case, build func(compare.Options) (*compare.Tables, error)) ([]Table, error) {
	groups := map[axis][]string{}
	var order []axis
	var floors []string
	for _, c := range cases {
		name := strings.TrimPrefix(c.Benchmark, "Benchmark")
		if c.Axis == "" {
			if !slices.Contains(floors, name) {
				floors = append(floors, name)
			}
			continue
		}
		k := axis{c.Axis, c.Baseline}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		if !slices.Contains(groups[k], name) {
			groups[k] = append(groups[k], name)
		}
	}
	var out []Table
	for _, k := range order {
		names := append(slices.Clone(groups[k]), floors...)
		ts, err := build(compare.Options{Col: "/" + k.name, Baseline: k.baseline, MinChange: compare.DefaultMinChange,
			Filter: ".name:(" + strings.Join(names, " OR ") + ")"})
		if err != nil {
			return nil, err
		}
		out = append(out, Table{k, ts})
	}
	return out, nil
}

// axis is an implementation axis: the parameter and its baseline value.
type axis struct{ name, baseline string }

// Table is an axis's comparison.
type Table struct {
	axis
	ts *compare.Tables
}

// Write writes the run's Tables, each under its heading.
func Write(w io.Writer, h report.Header, run *result.Run, sequential bool) error {
	var data bytes.Buffer
	if err := report.WriteBenchfmt(&data, h, run); err != nil {
		return err
	}
	var cases []result.Case
	for _, cr := range run.Cases {
		cases = append(cases, cr.Case)
	}
	tables, err := Tables(data.Bytes(), cases, sequential)
	if err != nil {
		return err
	}
	return WriteTables(w, tables)
}

// WriteOf writes the pull-request tables of a run measured on several
// machines (TablesOf paths), or, when its benchmarks declare no
// implementation axis, every row (all); decided by the anytime-valid
// test when sequential.
func WriteOf(w io.Writer, paths []string, cases []result.Case, all *compare.Tables, sequential bool) error {
	tables, err := TablesOf(paths, cases, sequential)
	if err != nil {
		return err
	}
	if len(tables) > 0 {
		return WriteTables(w, tables)
	}
	fmt.Fprintln(w)
	return all.Markdown(w, nil)
}

// WriteTables writes tables, each under its heading.
func WriteTables(w io.Writer, tables []Table) error {
	for _, t := range tables {
		fmt.Fprintf(w, "\n## /%s against %s\n\n", t.name, t.baseline)
		if err := t.ts.Markdown(w, nil); err != nil {
			return err
		}
	}
	return nil
}
