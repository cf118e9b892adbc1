package harness

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Suites are the suite names a benchmark can belong to. "all" holds every
// registered benchmark. "cursor" is apart from "cache" (DESIGN §2 puts
// the cursor container under eviction) because its 126 JMH-shaped cases
// would triple the quick cache run.
var Suites = []string{"cache", "cursor", "dedup", "location", "self", "all"}

func isSuite(s string) bool { return slices.Contains(Suites, s) }

// Registry holds benchmark declarations by family. It is safe for
// concurrent use; families register into [Default] from init functions.
type Registry struct {
	mu      sync.Mutex
	benches []*Benchmark
	byID    map[string]*Benchmark
}

// Default is the registry that the benchmark families register into and
// that benchctl runs.
var Default = &Registry{}

// Register adds b to the default registry; see [Registry.Register].
func Register(b *Benchmark) { Default.Register(b) }

// Register adds b. An invalid declaration or a duplicate ID is a
// programmer error and panics.
func (r *Registry) Register(b *Benchmark) {
	if err := b.Validate(); err != nil {
		panic("harness: invalid benchmark: " + err.Error())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = map[string]*Benchmark{}
	}
	if _, dup := r.byID[b.ID()]; dup {
		panic("harness: benchmark " + b.ID() + " registered twice")
	}
	for _, o := range r.benches {
		if o.Name == b.Name {
			panic("harness: benchmark name " + b.Name + " used by two families")
		}
	}
	r.byID[b.ID()] = b
	r.benches = append(r.benches, b)
}

// Lookup returns the benchmark with the given ID ("family/Name").
func (r *Registry) Lookup(id string) (*Benchmark, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.byID[id]
	return b, ok
}

// All returns every benchmark, sorted by family then name.
func (r *Registry) All() []*Benchmark {
	r.mu.Lock()
	out := slices.Clone(r.benches)
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Family != out[j].Family {
			return out[i].Family < out[j].Family
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Select returns the benchmarks of suite whose full name with parameters
// matches re (nil matches all). An unknown suite, a suite without
// benchmarks or a pattern that matches nothing is an error naming the
// valid choices.
func (r *Registry) Select(suite string, re *regexp.Regexp) ([]*Benchmark, error) {
	if suite == "" {
		suite = "all"
	}
	if !isSuite(suite) {
		return nil, fmt.Errorf("unknown suite %q (valid: %s)", suite, strings.Join(Suites, ", "))
	}
	var inSuite []*Benchmark
	for _, b := range r.All() {
		if suite == "all" || slices.Contains(b.Suites, suite) {
			inSuite = append(inSuite, b)
		}
	}
	if len(inSuite) == 0 {
		return nil, fmt.Errorf("suite %q has no benchmarks in this build (suites with benchmarks: %s)", suite, strings.Join(r.populatedSuites(), ", "))
	}
	if re == nil {
		return inSuite, nil
	}
	var out []*Benchmark
	for _, b := range inSuite {
		if b.matches(re) {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		names := make([]string, len(inSuite))
		for i, b := range inSuite {
			names[i] = b.FullName()
		}
		return nil, fmt.Errorf("--bench %q matches no benchmark of suite %s (benchmarks: %s)", re, suite, strings.Join(names, ", "))
	}
	return out, nil
}

// matches reports whether re matches the benchmark's ID, full name, or the
// name of one of its default parameter points.
func (b *Benchmark) matches(re *regexp.Regexp) bool {
	if re.MatchString(b.FullName()) || re.MatchString(b.ID()) {
		return true
	}
	points, _ := b.Expand(nil)
	for _, p := range points {
		if re.MatchString(b.FullName() + p.Suffix()) {
			return true
		}
	}
	return false
}

func (r *Registry) populatedSuites() []string {
	var out []string
	for _, s := range Suites {
		for _, b := range r.All() {
			if s == "all" || slices.Contains(b.Suites, s) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// Case is one benchmark at one parameter point: the unit that forks run.
type Case struct {
	Bench  *Benchmark
	Params Params
}

// Name is the benchfmt name "BenchmarkX/a=1/b=2".
func (c Case) Name() string { return c.Bench.FullName() + c.Params.Suffix() }

// Cases expands the selected benchmarks to cases, keeping only the cases
// whose name matches re when re matches a parameter point rather than the
// benchmark itself. Every override must name a parameter of at least one
// selected benchmark.
func Cases(benches []*Benchmark, re *regexp.Regexp, o Overrides) ([]Case, error) {
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
				return nil, fmt.Errorf("unknown parameter %q: the selected benchmarks declare no parameters", name)
			}
			return nil, fmt.Errorf("unknown parameter %q (parameters of the selected benchmarks: %s)", name, strings.Join(valid, ", "))
		}
	}
	var out []Case
	for _, b := range benches {
		points, err := b.Expand(o)
		if err != nil {
			return nil, err
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
		return nil, fmt.Errorf("--bench %q matches no parameter point of the selected benchmarks", re)
	}
	return out, nil
}
