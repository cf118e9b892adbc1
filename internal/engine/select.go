package engine

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// Case is one benchmark at one parameter point, or one go test
// benchmark (Test set, Bench nil), or a benchmark of a program known by
// its description alone (see [Described]): the unit that forks run.
type Case struct {
	Bench  *harness.Benchmark
	Params result.Params
	Test   *GoTest
	desc   *Described
}

// Name is the benchfmt name "BenchmarkX/a=1/b=2".
func (c Case) Name() string {
	switch {
	case c.Test != nil:
		return c.Test.Name
	case c.desc != nil:
		return c.desc.Case.Name()
	}
	return c.Bench.FullName() + c.Params.Suffix()
}

// Result is the case's identity in the result model.
func (c Case) Result() result.Case {
	if t := c.Test; t != nil {
		return result.Case{Benchmark: t.Name, ID: t.Pkg + "." + t.Name, Family: path.Base(t.Pkg), Pkg: t.Pkg, GoTest: true}
	}
	if c.desc != nil {
		return c.desc.Case
	}
	r := result.Case{Benchmark: c.Bench.FullName(), ID: c.Bench.ID(), Family: c.Bench.Family,
		Pkg: c.Bench.Pkg(), Params: c.Params, Units: c.Bench.Units}
	for _, p := range c.Bench.Params {
		if p.Baseline != "" {
			r.Axis, r.Baseline = p.Name, p.Baseline
		}
	}
	return r
}

// Expand returns the parameter points of b with o replacing defaults.
func Expand(b *harness.Benchmark, o Overrides) ([]result.Params, error) {
	return harness.Expand(b, o)
}

// Suites lists the suites the benchmarks of r declare, sorted, then "all".
func Suites(r *harness.Registry) []string {
	set := map[string]bool{}
	for _, b := range r.Benchmarks() {
		for _, s := range b.Suites {
			set[s] = true
		}
	}
	out := make([]string, 0, len(set)+1)
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return append(out, "all")
}

// Select returns the benchmarks of suite whose full name with parameters
// matches re (nil matches all). An unknown suite or a pattern that matches
// nothing is an error naming the valid choices.
func Select(r *harness.Registry, suite string, re *regexp.Regexp) ([]*harness.Benchmark, error) {
	all := r.Benchmarks()
	if len(all) == 0 {
		return nil, fmt.Errorf("no benchmark is registered in this program: import the packages that call harness.Register")
	}
	if suite == "" {
		suite = "all"
	}
	var inSuite []*harness.Benchmark
	for _, b := range all {
		if suite == "all" || slices.Contains(b.Suites, suite) {
			inSuite = append(inSuite, b)
		}
	}
	if len(inSuite) == 0 {
		return nil, &OptionError{Option: "Suite", Value: suite, Err: fmt.Errorf("unknown suite (suites: %s)", strings.Join(Suites(r), ", "))}
	}
	if re == nil {
		return inSuite, nil
	}
	var out []*harness.Benchmark
	for _, b := range inSuite {
		if matches(b, re) {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		names := make([]string, len(inSuite))
		for i, b := range inSuite {
			names[i] = b.FullName()
		}
		return nil, &OptionError{Option: "Bench", Value: re.String(), Err: fmt.Errorf("matches no benchmark of suite %s (benchmarks: %s)", suite, strings.Join(names, ", "))}
	}
	return out, nil
}

// matches reports whether re matches the benchmark's ID, full name, or the
// name of one of its default parameter points.
func matches(b *harness.Benchmark, re *regexp.Regexp) bool {
	if re.MatchString(b.FullName()) || re.MatchString(b.ID()) {
		return true
	}
	points, _ := Expand(b, nil)
	for _, p := range points {
		if re.MatchString(b.FullName() + p.Suffix()) {
			return true
		}
	}
	return false
}

// Cases expands the selected benchmarks to cases, keeping only the cases
// whose name matches re when re matches a parameter point rather than the
// benchmark itself. Every override must name a parameter of at least one
// selected benchmark.
func Cases(benches []*harness.Benchmark, re *regexp.Regexp, o Overrides) ([]Case, error) {
	return cases(benches, re, o, false)
}

// cases is Cases; quick uses each parameter's Quick values where o does
// not set it.
func cases(benches []*harness.Benchmark, re *regexp.Regexp, o Overrides, quick bool) ([]Case, error) {
	known := map[string]bool{}
	for _, b := range benches {
		for _, p := range b.Params {
			known[p.Name] = true
		}
	}
	for name := range o {
		if !known[name] {
			valid := make([]string, 0, len(known))
			for k := range known {
				valid = append(valid, k)
			}
			sort.Strings(valid)
			if len(valid) == 0 {
				return nil, &OptionError{Option: "Params", Value: name, Err: fmt.Errorf("unknown parameter: the selected benchmarks declare no parameters")}
			}
			return nil, &OptionError{Option: "Params", Value: name, Err: fmt.Errorf("unknown parameter (parameters of the selected benchmarks: %s)", strings.Join(valid, ", "))}
		}
	}
	var out []Case
	for _, b := range benches {
		ov := o
		if quick {
			ov = quickOverrides(b, o)
		}
		points, err := Expand(b, ov)
		if err != nil {
			return nil, &OptionError{Option: "Params", Err: err}
		}
		whole := re == nil || re.MatchString(b.FullName()) || re.MatchString(b.ID())
		for _, p := range points {
			c := Case{Bench: b, Params: p}
			if whole || re.MatchString(c.Name()) {
				out = append(out, c)
			}
		}
	}
	if len(out) == 0 {
		return nil, &OptionError{Option: "Bench", Value: re.String(), Err: fmt.Errorf("matches no parameter point of the selected benchmarks")}
	}
	return out, nil
}

// Overrides maps parameter names to the values that replace their defaults.
type Overrides map[string][]string

// ParseOverride parses one override: "name=v1,v2,…".
func ParseOverride(s string) (name string, values []string, err error) {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, "/= \t,") {
		return "", nil, fmt.Errorf("bad parameter %q: want name=v1,v2", s)
	}
	for v := range strings.SplitSeq(list, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return "", nil, fmt.Errorf("bad parameter %q: empty value", s)
		}
		if slices.Contains(values, v) {
			continue
		}
		values = append(values, v)
	}
	return name, values, nil
}

// Add parses one override into o. A name given twice is an error.
func (o Overrides) Add(s string) error {
	name, values, err := ParseOverride(s)
	if err != nil {
		return err
	}
	if _, dup := o[name]; dup {
		return fmt.Errorf("parameter %s is given twice", name)
	}
	o[name] = values
	return nil
}

// OptionError is an invalid option of a run: Option names the [Options]
// field, Value the value given. A command line names its own flag for it.
type OptionError struct {
	Option string
	Value  string
	Err    error
}

func (e *OptionError) Error() string {
	if e.Value == "" {
		return strings.ToLower(e.Option) + ": " + e.Err.Error()
	}
	return fmt.Sprintf("%s %q: %v", strings.ToLower(e.Option), e.Value, e.Err)
}

func (e *OptionError) Unwrap() error { return e.Err }

// quickOverrides are o with the Quick values of b's parameters that o
// does not set.
func quickOverrides(b *harness.Benchmark, o Overrides) Overrides {
	out := Overrides{}
	for k, v := range o {
		out[k] = v
	}
	for _, p := range b.Params {
		if _, set := o[p.Name]; !set && len(p.Quick) > 0 {
			out[p.Name] = p.Quick
		}
	}
	return out
}
