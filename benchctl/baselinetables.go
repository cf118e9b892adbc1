package benchctl

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

// baselineTables writes, for each implementation axis the run's benchmarks
// declare (harness.Param.Baseline), the pull-request table: every other
// value of the axis against the declared baseline, per benchmark, with
// fork-level statistics; the run's benchmarks without the axis (floors,
// no-ops) follow in a table of their own as the distance to the limit.
func baselineTables(w io.Writer, h report.Header, run *result.Run) error {
	type axis struct{ name, baseline string }
	groups := map[axis][]string{}
	var order []axis
	var floors []string
	for _, cr := range run.Cases {
		name := strings.TrimPrefix(cr.Case.Benchmark, "Benchmark")
		if cr.Case.Axis == "" {
			if !slices.Contains(floors, name) {
				floors = append(floors, name)
			}
			continue
		}
		k := axis{cr.Case.Axis, cr.Case.Baseline}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		if !slices.Contains(groups[k], name) {
			groups[k] = append(groups[k], name)
		}
	}
	if len(order) == 0 {
		return nil
	}
	var data bytes.Buffer
	if err := report.WriteBenchfmt(&data, h, run); err != nil {
		return err
	}
	for _, k := range order {
		names := append(slices.Clone(groups[k]), floors...)
		ts, err := compare.BuildData("bench.txt", data.Bytes(), compare.Options{
			Col: "/" + k.name, Baseline: k.baseline, MinChange: compare.DefaultMinChange, Filter: ".name:(" + strings.Join(names, " OR ") + ")"})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n## /%s against %s\n\n", k.name, k.baseline)
		if err := ts.Markdown(w, nil); err != nil {
			return err
		}
	}
	return nil
}
