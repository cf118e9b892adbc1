package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/ledgerbench/ledgerbench/harness/result"
	lbprofile "github.com/ledgerbench/ledgerbench/internal/profile"
)

// Fork is one profiling fork of one side: its CPU profile, the ops
// measured while it was taken, and the Go version of its program ("" when
// the program did not say).
type Fork struct {
	Path      string
	Round     int
	Ops       int64
	Profile   *profile.Profile
	GoVersion string
}

// Load reads the CPU profiles among a case's profiling forks, in the
// order of their rounds. A fork that failed or measured no op is left
// out, and said why in failed: its round has no pair, and Diff pairs the
// rounds both sides have. A file that cannot be read is an error.
func Load(runs []result.ProfileRun) (forks []Fork, failed []string, err error) {
	for _, pr := range runs {
		if pr.Kind != "cpu" {
			continue
		}
		if pr.Err != nil {
			failed = append(failed, fmt.Sprintf("profiling fork %d failed: %v", pr.Round, pr.Err))
			continue
		}
		if pr.Ops <= 0 {
			failed = append(failed, fmt.Sprintf("profiling fork %d measured no op (%s)", pr.Round, pr.Path))
			continue
		}
		p, err := lbprofile.Read(pr.Path)
		if err != nil {
			return nil, failed, err
		}
		forks = append(forks, Fork{Path: pr.Path, Round: pr.Round, Ops: pr.Ops, Profile: p, GoVersion: pr.GoVersion})
	}
	slices.SortStableFunc(forks, func(a, b Fork) int { return a.Round - b.Round })
	return forks, failed, nil
}

// cpuIndex is the index of the CPU time among p's sample values.
func cpuIndex(p *profile.Profile) (int, error) {
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			return i, nil
		}
	}
	return 0, fmt.Errorf("not a CPU profile: its sample types are %v", p.SampleType)
}

// perOp is one fork's CPU time per op, in nanoseconds: in all (total), by
// leaf function (flat) and by every function on the stack (cum).
type perOp struct {
	total     float64
	flat, cum map[string]float64
	samples   int64 // the fork's samples (not per op)
}

// costs attributes f's samples as pprof does and divides by its ops.
func costs(f Fork) (perOp, error) {
	i, err := cpuIndex(f.Profile)
	if err != nil {
		return perOp{}, fmt.Errorf("%s: %w", f.Path, err)
	}
	c := perOp{flat: map[string]float64{}, cum: map[string]float64{}}
	ops := float64(f.Ops)
	seen := map[string]bool{} // a sample's functions counted in cum, cleared per sample
	for _, s := range f.Profile.Sample {
		v := float64(s.Value[i]) / ops
		names := stack(s)
		c.total += v
		if f.Profile.Period > 0 {
			c.samples += s.Value[i] / f.Profile.Period
		}
		if len(names) == 0 {
			continue
		}
		c.flat[names[0]] += v
		clear(seen)
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				c.cum[n] += v
			}
		}
	}
	return c, nil
}

// stack is a sample's function names (FuncName's) from the leaf to the
// root, each location's inlined functions innermost first; "?" for a
// location without symbols.
func stack(s *profile.Sample) []string {
	var names []string
	for _, loc := range s.Location {
		if len(loc.Line) == 0 {
			names = append(names, fmt.Sprintf("? %#x", loc.Address))
			continue
		}
		for _, l := range loc.Line {
			if l.Function != nil {
				names = append(names, FuncName(l.Function.Name))
			}
		}
	}
	return names
}

// toolchains is a note when the two sides' programs were built by
// different Go versions: the runtime's functions, and what the compiler
// inlined, then differ by the toolchain alone, so a function named may
// have moved with it rather than with the change. "" when they agree, or
// when a side's programs did not say.
func toolchains(base, exp []Fork) string {
	b, e := versions(base), versions(exp)
	if len(b) == 0 || len(e) == 0 || slices.Equal(b, e) {
		return ""
	}
	return fmt.Sprintf("the sides' programs were built by different toolchains (baseline %s, experiment %s): runtime functions and inlining differ by the toolchain alone, so a function named may have moved with it, not with the change",
		strings.Join(b, ", "), strings.Join(e, ", "))
}

// versions are the distinct Go versions forks' programs said, sorted.
func versions(forks []Fork) []string {
	var out []string
	for _, f := range forks {
		if f.GoVersion != "" && !slices.Contains(out, f.GoVersion) {
			out = append(out, f.GoVersion)
		}
	}
	slices.Sort(out)
	return out
}
