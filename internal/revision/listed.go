package revision

import (
	"github.com/ledgerbench/ledgerbench/harness"
)

// Listed is one benchmark as a program's `list --json` prints it: how a
// revision's program tells which benchmarks it declares.
type Listed struct {
	ID         string        `json:"id"`
	Name       string        `json:"name"`
	Family     string        `json:"family"`
	Pkg        string        `json:"pkg"`
	Suites     []string      `json:"suites"`
	Mode       string        `json:"mode"`
	Goroutines int           `json:"goroutines"`
	Params     []ListedParam `json:"params,omitempty"`
	Doc        string        `json:"doc,omitempty"`
}

// ListedParam is one parameter of a Listed benchmark.
type ListedParam struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
	Kind   string   `json:"kind"`
}

// Describe is b as `list --json` lists it.
func Describe(b *harness.Benchmark) Listed {
	l := Listed{ID: b.ID(), Name: b.FullName(), Family: b.Family, Pkg: b.Pkg(),
		Suites: append([]string{"all"}, b.Suites...), Mode: string(b.Mode), Goroutines: max(b.Goroutines, 1), Doc: b.Doc}
	if l.Mode == "" {
		l.Mode = string(harness.AverageTime)
	}
	for _, p := range b.Params {
		l.Params = append(l.Params, ListedParam{p.Name, p.Values, p.Kind.String()})
	}
	return l
}
