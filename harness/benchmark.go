package harness

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// Benchmark declares one benchmark: its identity, its parameter axes, its
// defaults, and Setup, which builds the benchmark-scoped state of one trial
// and declares the op (or the group of ops) that the workers run.
type Benchmark struct {
	// Family groups related benchmarks (often one per package); Name is
	// the benchmark's own name ("Add"), so its full name is "BenchmarkAdd".
	// Names are unique in a registry.
	Family string
	Name   string
	Doc    string
	// Suites the benchmark belongs to: a suite exists because a benchmark
	// declares it, and every benchmark is also in "all". A suite name is
	// a letter followed by letters, digits, '_', '-' or '.'.
	Suites []string
	Params []Param
	// Mode is the default mode (AverageTime when empty).
	Mode result.Mode
	// Goroutines is the default number of worker goroutines of a symmetric
	// benchmark, or the total goroutines of a group benchmark, rounded up
	// to a multiple of the group's size as JMH does (default: one
	// goroutine, or one group instance).
	Goroutines int
	// OpsPerInvocation is how many ops one call of the op body performs
	// (JMH's @OperationsPerInvocation). Default 1.
	OpsPerInvocation int
	// Units gives metadata for custom metrics (better=higher, assume=exact).
	Units []result.Unit
	// Setup runs once per trial in the worker process (JMH's Level.Trial
	// setup of the Scope.Benchmark state). It must call exactly one of
	// [Trial.Run] or [Trial.Group].
	Setup func(t *Trial) error

	pkg string // import path of the package that registered it
}

var (
	nameRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
	suiteRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)
)

// FullName is "Benchmark" + Name, the benchfmt name without parameters.
func (b *Benchmark) FullName() string { return "Benchmark" + b.Name }

// ID is the registry key "family/Name".
func (b *Benchmark) ID() string { return b.Family + "/" + b.Name }

// Pkg is the import path of the Go package that registered the benchmark
// (found on the caller's stack at registration; "" before it): the pkg key
// of its results.
func (b *Benchmark) Pkg() string { return b.pkg }

// setPkg records pkg as the import path of the package that declared b,
// unless one is recorded already: the registry calls it.
func setPkg(b *Benchmark, pkg string) {
	if b.pkg == "" {
		b.pkg = pkg
	}
}

// validate checks a declaration before it is registered: names,
// parameters and defaults.
func validate(b *Benchmark) error {
	var errs []error
	if !nameRE.MatchString(b.Name) {
		errs = append(errs, fmt.Errorf("benchmark name %q is not an identifier", b.Name))
	}
	if !nameRE.MatchString(b.Family) {
		errs = append(errs, fmt.Errorf("%s: family %q is not an identifier", b.Name, b.Family))
	}
	if b.Setup == nil {
		errs = append(errs, fmt.Errorf("%s: Setup is nil", b.Name))
	}
	if b.Mode != "" {
		if _, err := result.ParseMode(string(b.Mode)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", b.Name, err))
		}
	}
	if b.Goroutines < 0 || b.OpsPerInvocation < 0 {
		errs = append(errs, fmt.Errorf("%s: negative Goroutines or OpsPerInvocation", b.Name))
	}
	seen := map[string]bool{"op": true}
	axes := 0
	for _, p := range b.Params {
		if !nameRE.MatchString(p.Name) {
			errs = append(errs, fmt.Errorf("%s: parameter name %q is not an identifier", b.Name, p.Name))
		}
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("%s: parameter %q is declared twice or is reserved", b.Name, p.Name))
		}
		seen[p.Name] = true
		if len(p.Values) == 0 {
			errs = append(errs, fmt.Errorf("%s: parameter %s has no default values", b.Name, p.Name))
		}
		for _, v := range p.Values {
			if err := p.Check(v); err != nil {
				errs = append(errs, fmt.Errorf("%s: default: %w", b.Name, err))
			}
		}
		if p.Baseline != "" {
			if err := p.Check(p.Baseline); err != nil {
				errs = append(errs, fmt.Errorf("%s: baseline: %w", b.Name, err))
			}
			if axes++; axes == 2 {
				errs = append(errs, fmt.Errorf("%s: two parameters declare a Baseline; one axis has it", b.Name))
			}
		}
	}
	for _, s := range b.Suites {
		if !suiteRE.MatchString(s) {
			errs = append(errs, fmt.Errorf("%s: suite name %q must be a letter followed by letters, digits, '_', '-' or '.'", b.Name, s))
		}
	}
	return errors.Join(errs...)
}

func (b *Benchmark) mode() result.Mode {
	if b.Mode == "" {
		return result.AverageTime
	}
	return b.Mode
}

func (b *Benchmark) opsPerInvocation() int {
	if b.OpsPerInvocation <= 0 {
		return 1
	}
	return b.OpsPerInvocation
}
