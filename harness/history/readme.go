package history

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/perf/benchunit"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// MachineReport is what the results README shows for one machine.
type MachineReport struct {
	MachineID string
	Runs      []string // result files, oldest first
	Series    []*Series
	Shifts    map[*Series][]Shift
	Warnings  []string
	// Charts maps a series to its chart file, when drawn.
	Charts map[*Series]string
	// BisectCommand, when set, is the command that bisects a regression,
	// shown beside it.
	BisectCommand func(Regression) string
	// Bisected, when set, says what a bisection of a regression found
	// ("" when none ran), shown instead of the command.
	Bisected func(Regression) string
	// Explained, when set, says what an A/B of a regression's commits
	// found of it, and the functions behind it ("" when none ran), shown
	// before the bisection or its command.
	Explained func(Regression) string
}

// ChartName is the file name of a series' chart.
func ChartName(s *Series) string {
	r := strings.NewReplacer("/", "_", "=", "-", " ", "_")
	return r.Replace(s.Benchmark) + "_" + r.Replace(s.Unit) + ".svg"
}

// Regressions are the open regressions of every series (new, or
// standing: older than the alarm's window but not undone), each a line
// with its commit range and, when BisectCommand is set, the command that
// bisects it: what the README lists.
func (m *MachineReport) Regressions() []string { return m.Lines(m.OpenRegressions()) }

// Lines are regressions rs as Regressions writes them.
func (m *MachineReport) Lines(rs []Regression) []string {
	var out []string
	for _, r := range rs {
		line := fmt.Sprintf("%s %s: %s (commits %s..%s)", r.Series.Benchmark, r.Series.Unit, r.Shift, short(r.Good), short(r.Bad))
		if !r.Shift.New {
			line += ", standing: older than the alarm's last " + fmt.Sprint(NewWindow) + " runs, not undone"
		}
		if m.Explained != nil {
			if e := m.Explained(r); e != "" {
				line += "; " + e
			}
		}
		switch {
		case m.Bisected != nil && m.Bisected(r) != "":
			line += "; " + m.Bisected(r)
		case m.BisectCommand != nil:
			line += "; bisect it: `" + m.BisectCommand(r) + "`"
		}
		out = append(out, line)
	}
	return out
}

// Regression is a new worse shift of a series and its commit range: good
// is the commit of the last run before the change point, bad that of the
// first run after it.
type Regression struct {
	Series    *Series
	Shift     Shift
	Good, Bad string
}

// BisectCommand is the command line that bisects a regression of the
// benchmark between the commits good and bad: prog's bisect of that
// benchmark alone (its name without "Benchmark" and the GOMAXPROCS
// suffix, anchored), following unit when it is not the time, over the
// package patterns given (none for registered benchmarks).
func BisectCommand(prog, good, bad, benchmark, unit string, patterns []string) string {
	name := result.TrimProcs(strings.TrimPrefix(benchmark, "Benchmark"))
	args := []string{prog, "bisect", "--good", short(good), "--bad", short(bad), "--bench", shellQuote("^Benchmark" + regexp.QuoteMeta(name) + "$")}
	if unit != "sec/op" && unit != "ops/s" {
		args = append(args, "--metric", shellQuote(unit))
	}
	for _, p := range patterns {
		args = append(args, shellQuote(p))
	}
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// NewRegressions are the new worse shifts of every series: nightly's
// alarm.
func (m *MachineReport) NewRegressions() []Regression {
	return m.regressions(func(sh Shift) bool { return sh.New })
}

// OpenRegressions are the worse shifts of every series that are new or
// standing (Shift.Standing): a regression stays open until undone, as
// the server shows it.
func (m *MachineReport) OpenRegressions() []Regression {
	return m.regressions(func(sh Shift) bool { return sh.New || sh.Standing })
}

func (m *MachineReport) regressions(keep func(Shift) bool) []Regression {
	var out []Regression
	for _, s := range m.Series {
		for _, sh := range m.Shifts[s] {
			if keep(sh) {
				out = append(out, Regression{Series: s, Shift: sh, Good: s.Points[sh.Index-1].Commit, Bad: s.Points[sh.Index].Commit})
			}
		}
	}
	return out
}

func short(c string) string {
	c = strings.TrimSuffix(c, "+dirty")
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// WriteREADME renders results/README.md: per machine, the latest value
// of every benchmark with its change from the run before, the open
// regressions with their commit range, environment changes, and links to
// the raw files (relative to dir).
func WriteREADME(w io.Writer, dir string, machines []*MachineReport) error {
	var b strings.Builder
	b.WriteString("# Results\n\nGenerated by `benchctl nightly`; do not edit. Raw files are Go benchmark format (`go tool benchstat` reads them).\n")
	for _, m := range machines {
		fmt.Fprintf(&b, "\n## Machine %s\n\n", m.MachineID)
		if len(m.Series) == 0 || len(m.Runs) == 0 {
			b.WriteString("No nightly runs yet.\n")
			continue
		}
		last := m.Runs[len(m.Runs)-1]
		rel, _ := filepath.Rel(dir, last)
		fmt.Fprintf(&b, "%d runs; the latest is [%s](%s).\n\n", len(m.Runs), filepath.Base(last), filepath.ToSlash(rel))
		if regs := m.Regressions(); len(regs) > 0 {
			b.WriteString("**Open regressions**\n\n")
			for _, r := range regs {
				fmt.Fprintf(&b, "- %s\n", r)
			}
			b.WriteString("\n")
		}
		// The series whose distribution changed, drawn inline.
		for _, s := range m.Series {
			p, ok := m.Charts[s]
			if !ok || len(m.Shifts[s]) == 0 {
				continue
			}
			rel, _ := filepath.Rel(dir, p)
			fmt.Fprintf(&b, "![%s %s](%s)\n\n", s.Benchmark, s.Unit, filepath.ToSlash(rel))
		}
		b.WriteString("| Benchmark | Unit | Latest | vs previous run | Change points | Chart |\n|:--|:--|--:|--:|:--|:--|\n")
		for _, s := range m.Series {
			p := s.Points
			latest := p[len(p)-1].Value
			prev := "–"
			if len(p) > 1 {
				prev = fmt.Sprintf("%+.1f %%", 100*(latest/p[len(p)-2].Value-1))
			}
			var shifts []string
			for _, sh := range m.Shifts[s] {
				note := sh.String()
				if sh.EnvChanged {
					note += " (environment changed)"
				}
				if sh.Small && !sh.EnvChanged {
					note += fmt.Sprintf(" (small: under %g× the series' noise)", DefaultMinEffect)
				}
				if sh.New {
					note = "**" + note + " NEW**"
				}
				shifts = append(shifts, note)
			}
			chart := ""
			if p, ok := m.Charts[s]; ok {
				rel, _ := filepath.Rel(dir, p)
				chart = fmt.Sprintf("[series](%s)", filepath.ToSlash(rel))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", s.Benchmark, s.Unit, benchunit.Scale(latest, benchunit.ClassOf(s.Unit)), prev, strings.Join(shifts, "; "), chart)
		}
		for _, w := range m.Warnings {
			fmt.Fprintf(&b, "\n> %s\n", w)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
