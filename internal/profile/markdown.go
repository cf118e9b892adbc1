package profile

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"golang.org/x/perf/benchunit"
)

// CaseProfiles is everything profiled for one benchmark case.
type CaseProfiles struct {
	Name string // the case's full name
	// Group is the name without the side's key (impl=…), Side that key;
	// cases of one group are compared side by side.
	Group     string
	Side      string
	Summaries []*Summary
	// InstructionsPerOp is callgrind's exact count (0: not measured).
	InstructionsPerOp float64
	// Counters are perf's event counts per op.
	Counters map[string]float64
	Notes    []string
}

var titles = map[Kind]string{
	CPU:    "CPU (share of samples in the measured windows)",
	OffCPU: "wall clock, on and off CPU (fgprof; perturbs timing)",
	Block:  "blocked time per op",
	Mutex:  "mutex wait per op (charged to the unlocker)",
	Allocs: "allocations per op",
}

func formatValue(unit string, v float64) string {
	if v == 0 {
		return "none"
	}
	if unit == "B/op" {
		return benchunit.Scale(v, benchunit.Binary) + "B/op"
	}
	return benchunit.Scale(v/1e9, benchunit.Decimal) + "s/op"
}

func formatTotal(s *Summary) string {
	if s.TotalRaw == 0 {
		return "none"
	}
	if s.Unit == "B/op" {
		return benchunit.Scale(s.TotalRaw, benchunit.Binary) + "B"
	}
	return benchunit.Scale(s.TotalRaw/1e9, benchunit.Decimal) + "s"
}

// WriteMarkdown renders every case's summaries, then, for cases that
// differ only in their side (impl=…), the top frames side by side.
func WriteMarkdown(w io.Writer, cases []CaseProfiles) error {
	var b strings.Builder
	b.WriteString("# Profiles\n\nValues are per measured op of the profiling fork; files are `go tool pprof` readable.\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "\n## %s\n", c.Name)
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "\n- %s\n", n)
		}
		if len(c.Counters) > 0 {
			var parts []string
			for _, ev := range slices.Sorted(maps.Keys(c.Counters)) {
				parts = append(parts, fmt.Sprintf("%s %.4g/op", ev, c.Counters[ev]))
			}
			fmt.Fprintf(&b, "\n- perf stat (counters enabled around the measured loop only): %s\n", strings.Join(parts, ", "))
		}
		if c.InstructionsPerOp > 0 {
			fmt.Fprintf(&b, "\n- instructions: %.1f instructions/op (callgrind, exact)\n", c.InstructionsPerOp)
		}
		for _, s := range c.Summaries {
			fmt.Fprintf(&b, "\n### %s: %s\n\n`%s`, %d ops, total %s (%s)\n\n", s.Kind, titles[s.Kind], s.Path, s.Ops, formatTotal(s), formatValue(s.Unit, s.Total))
			b.WriteString("| frame | per op | share | events/op |\n|---|---:|---:|---:|\n")
			for _, e := range s.Top {
				fmt.Fprintf(&b, "| `%s` | %s | %.1f %% | %.3g |\n", e.Frame, formatValue(s.Unit, e.Value), 100*e.Share, e.Count)
			}
		}
	}
	writeSideBySide(&b, cases)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeSideBySide(b *strings.Builder, cases []CaseProfiles) {
	groups := map[string][]CaseProfiles{}
	var order []string
	for _, c := range cases {
		if c.Side == "" {
			continue
		}
		if _, ok := groups[c.Group]; !ok {
			order = append(order, c.Group)
		}
		groups[c.Group] = append(groups[c.Group], c)
	}
	first := true
	for _, g := range order {
		cs := groups[g]
		if len(cs) < 2 {
			continue
		}
		if first {
			b.WriteString("\n# Side by side\n")
			first = false
		}
		for _, k := range Kinds {
			per := make([]*Summary, len(cs))
			have := false
			for i, c := range cs {
				for _, s := range c.Summaries {
					if s.Kind == k {
						per[i], have = s, true
					}
				}
			}
			if !have {
				continue
			}
			fmt.Fprintf(b, "\n## %s: %s\n\n", g, titles[k])
			var sides []string
			for _, c := range cs {
				sides = append(sides, c.Side)
			}
			// The seed's sentence for the costliest frame of the first side.
			if s0 := per[0]; s0 != nil && len(s0.Top) > 0 && k != CPU {
				top := s0.Top[0].Frame
				var parts []string
				for i, s := range per {
					parts = append(parts, fmt.Sprintf("%s %s", sides[i], frameTotal(s, top)))
				}
				fmt.Fprintf(b, "On `%s`: %s.\n\n", top, strings.Join(parts, " → "))
			}
			fmt.Fprintf(b, "| frame | %s |\n|---|%s\n", strings.Join(sides, " | "), strings.Repeat("---:|", len(sides)))
			for _, f := range unionFrames(per) {
				row := []string{"`" + f + "`"}
				for _, s := range per {
					row = append(row, frameValue(s, f))
				}
				fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
			}
		}
	}
}

func unionFrames(per []*Summary) []string {
	seen := map[string]float64{}
	for _, s := range per {
		if s == nil {
			continue
		}
		for _, e := range s.Top {
			seen[e.Frame] = max(seen[e.Frame], e.Share)
		}
	}
	var out []string
	for f := range seen {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if seen[out[i]] != seen[out[j]] {
			return seen[out[i]] > seen[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

func frameValue(s *Summary, frame string) string {
	if s == nil {
		return "not profiled"
	}
	for _, e := range s.Top {
		if e.Frame == frame {
			if s.Kind == CPU {
				return fmt.Sprintf("%.1f %%", 100*e.Share)
			}
			return formatValue(s.Unit, e.Value)
		}
	}
	return "none"
}

// frameTotal is a frame's whole-window total ("3.0 s") and per-op value.
func frameTotal(s *Summary, frame string) string {
	if s == nil {
		return "not profiled"
	}
	for _, e := range s.Top {
		if e.Frame == frame && e.Value > 0 {
			raw := e.Value * float64(max(s.Ops, 1))
			if s.Unit == "B/op" {
				return fmt.Sprintf("%sB (%s)", benchunit.Scale(raw, benchunit.Binary), formatValue(s.Unit, e.Value))
			}
			return fmt.Sprintf("%ss (%s)", benchunit.Scale(raw/1e9, benchunit.Decimal), formatValue(s.Unit, e.Value))
		}
	}
	return "none"
}
