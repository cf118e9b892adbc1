package nightly

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
)

// A ChartFunc draws a series of values, its change points marked, to path
// (.svg or .png).
type ChartFunc func(path, title, unit string, values []float64, changePoints []int) error

// recordNew records a nightly run at path, or beside it as path-2.txt,
// path-3.txt… when another run took that name meanwhile: it creates the
// file exclusively and never replaces a recorded run.
func recordNew(path string, data []byte) (string, error) {
	base := strings.TrimSuffix(path, ".txt")
	for i := 1; i <= 100; i++ {
		p := path
		if i > 1 {
			p = fmt.Sprintf("%s-%d.txt", base, i)
		}
		err := atomicfile.CreateNew(p, data)
		if !errors.Is(err, fs.ErrExist) {
			return p, err
		}
	}
	return "", fmt.Errorf("%s and 99 more names beside it exist: nightly results are append-only", path)
}

// machineReports reads every machine's nightly series and their shifts.
func machineReports(dir string) ([]*history.MachineReport, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "nightly"))
	if err != nil {
		return nil, err
	}
	var out []*history.MachineReport
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		runs, err := history.Runs(dir, e.Name())
		if err != nil {
			return nil, err
		}
		series, used, warnings := history.LoadMachine(runs, e.Name())
		m := &history.MachineReport{MachineID: e.Name(), Runs: used, Series: series, Shifts: map[*history.Series][]history.Shift{}, Warnings: warnings}
		for _, s := range series {
			m.Shifts[s] = history.Analyze(s, history.CPDOptions{Seed: 1})
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MachineID < out[j].MachineID })
	return out, nil
}

// writeCharts draws each series of m with its change points.
func writeCharts(draw ChartFunc, resultsDir string, m *history.MachineReport) error {
	m.Charts = map[*history.Series]string{}
	for _, s := range m.Series {
		p := filepath.Join(resultsDir, "charts", m.MachineID, history.ChartName(s))
		values := make([]float64, len(s.Points))
		for i, pt := range s.Points {
			values[i] = pt.Value
		}
		var cps []int
		for _, sh := range m.Shifts[s] {
			cps = append(cps, sh.Index)
		}
		if err := draw(p, s.Benchmark+" on "+m.MachineID, s.Unit, values, cps); err != nil {
			return err
		}
		m.Charts[s] = p
	}
	return nil
}
