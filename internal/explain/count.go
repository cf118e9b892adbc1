package explain

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// SourceLine is a file and line as one side's program has them.
type SourceLine struct {
	File string
	Line int
}

func (l SourceLine) String() string { return fmt.Sprintf("%s:%d", l.File, l.Line) }

// Counted is one side's instructions per op, counted by callgrind: in
// all, by function (flat: in the function itself, the functions inlined
// into it apart, as pprof attributes; cum: with its callees and inlined
// functions) and, for flat, by source line.
type Counted struct {
	Total     float64
	Flat, Cum map[string]float64
	Lines     map[string]map[SourceLine]float64
	Notes     []string
	// Source reads a file of the side's source, as its positions name
	// it (os.ReadFile when nil): the top function's lines are matched by
	// their text.
	Source func(file string) ([]byte, error)
}

// Count reads one side's instructions fork: its callgrind files, and
// exe's debug information for the functions inlined at each address.
// One file is divided by its ops; two (a go test binary's runs at k and
// 2k ops) give their difference over the difference of their ops, which
// leaves out what both runs did once.
func Count(pr result.ProfileRun) (*Counted, error) {
	if pr.Err != nil {
		return nil, fmt.Errorf("the instructions fork failed: %v", pr.Err)
	}
	files := pr.Callgrind
	if len(files) == 0 || len(files) > 2 {
		return nil, fmt.Errorf("%d callgrind files: one or two are read", len(files))
	}
	c := &Counted{Flat: map[string]float64{}, Cum: map[string]float64{}, Lines: map[string]map[SourceLine]float64{}}
	in, err := profile.ReadInlining(pr.Exe)
	switch {
	case errors.Is(err, profile.ErrNoDWARF):
		c.Notes, in = append(c.Notes, err.Error()), nil
	case err != nil:
		return nil, err
	}
	ops := files[0].Ops
	sign := []float64{1}
	if len(files) == 2 {
		ops, sign = files[1].Ops-files[0].Ops, []float64{-1, 1}
	}
	if ops <= 0 {
		return nil, fmt.Errorf("callgrind files of %d ops: no cost per op to read", ops)
	}
	for i, f := range files {
		cg, err := profile.ReadCallgrind(f.Path)
		if err != nil {
			return nil, err
		}
		c.add(cg, in, sign[i]/float64(ops))
	}
	if profile.Stripped(pr.Exe) {
		c.Notes = append(c.Notes, "the program has no symbol table (stripped): callgrind names its functions by address")
	}
	return c, nil
}

// add adds cg's costs times scale.
func (c *Counted) add(cg *profile.Callgrind, in *profile.Inlining, scale float64) {
	c.Total += float64(cg.Total) * scale
	for _, k := range cg.Costs {
		var frames []string
		if in != nil {
			frames = in.Frames(k.Addr)
		}
		if len(frames) == 0 {
			frames = []string{symbolName(k.Function)}
		}
		for j, f := range frames {
			frames[j] = FuncName(f)
		}
		if k.Self != 0 {
			flat := frames[0]
			c.Flat[flat] += float64(k.Self) * scale
			lines := c.Lines[flat]
			if lines == nil {
				lines = map[SourceLine]float64{}
				c.Lines[flat] = lines
			}
			lines[SourceLine{k.File, k.Line}] += float64(k.Self) * scale
		}
		for j, f := range frames {
			if !slices.Contains(frames[:j], f) { // a recursion inlined into itself counts once
				c.Cum[f] += float64(k.Self+k.Call) * scale
			}
		}
	}
}

// symbolName is a function's name as pprof gives it, from callgrind's
// symbol: without the recursion depth callgrind appends ('2) and the ABI
// suffix of an assembly function (.abi0).
func symbolName(s string) string {
	s, _, _ = strings.Cut(s, "'")
	return strings.TrimSuffix(s, ".abi0")
}
