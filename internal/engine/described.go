package engine

import (
	"errors"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// Described is a case of a benchmark program as one machine describes it
// to another that has the program's binary but not the registry that
// declared it (a fleet's agent): what its result lines and its forks'
// plans need. It is JSON, and [Described.Runnable] makes it a Case again.
type Described struct {
	Case result.Case `json:"case"`
	Mode result.Mode `json:"mode,omitempty"`
	// Test is a go test benchmark's: it runs in its package's test
	// binary (TestBinaries), in the package's directory.
	Test *GoTest `json:"test,omitempty"`
}

// Describe describes c for a machine that runs it in a program's forks,
// or, for a go test benchmark, in its package's test binary (which,
// with the package's directory, the machine must be given).
func Describe(c Case) (Described, error) {
	switch {
	case c.Test != nil:
		t := *c.Test
		return Described{Case: c.Result(), Test: &t}, nil
	case c.desc != nil:
		return *c.desc, nil
	case c.Bench == nil:
		return Described{}, errors.New("a case without a benchmark")
	}
	return Described{Case: c.Result(), Mode: c.Bench.Mode}, nil
}

// Runnable is the case d describes: it runs only in forks of a program
// (Program launches), never in this process.
func (d Described) Runnable() Case {
	if d.Test != nil {
		t := *d.Test
		return Case{Test: &t} // a go test benchmark, run by its package's binary
	}
	return Case{Params: d.Case.Params, desc: &d}
}

// id is the registry key of c's benchmark, which its forks' plans name.
func (c Case) id() string {
	if c.desc != nil {
		return c.desc.Case.ID
	}
	return c.Bench.ID()
}
