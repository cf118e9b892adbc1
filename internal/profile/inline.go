package profile

import (
	"cmp"
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"sort"
)

// Inlining maps an executable's instruction addresses to the functions
// whose code they are, inlined ones included, from its DWARF: what pprof
// attributes a sample to, for positions callgrind names only by their
// symbol.
type Inlining struct {
	funcs []inlFunc // the functions compiled on their own, by address
}

// inlFunc is one compiled function: its ranges and the ranges of the
// functions inlined into it, outermost first.
type inlFunc struct {
	lo, hi  uint64
	name    string
	inlined []inlRange
}

type inlRange struct {
	lo, hi uint64
	name   string
	depth  int
}

// ErrNoDWARF is ReadInlining's error for an executable without debug
// information (built with -ldflags=-w or stripped).
var ErrNoDWARF = errors.New("no DWARF debug information (built with -ldflags=-w, or stripped): inlined functions are counted in their callers")

// ReadInlining reads exe's inlining from its DWARF.
func ReadInlining(exe string) (*Inlining, error) {
	f, err := elf.Open(exe)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return inliningOf(exe, f)
}

// inliningOf is ReadInlining of exe, opened as f.
func inliningOf(exe string, f *elf.File) (*Inlining, error) {
	d, err := f.DWARF()
	if err != nil {
		return nil, ErrNoDWARF
	}
	in, err := readInlining(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", exe, err)
	}
	return in, nil
}

func readInlining(d *dwarf.Data) (*Inlining, error) {
	in := &Inlining{}
	origins := map[dwarf.Offset]string{}
	// Inlined ranges wait for their abstract origin's name, which may
	// come later in the DWARF.
	type pendingRange struct {
		inlRange
		origin dwarf.Offset
	}
	var pending []pendingRange
	depth := 0
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			depth--
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		switch e.Tag {
		case dwarf.TagSubprogram:
			if name != "" {
				origins[e.Offset] = name
			}
			if rs, _ := d.Ranges(e); len(rs) > 0 && name != "" {
				in.funcs = append(in.funcs, inlFunc{lo: rs[0][0], hi: rs[0][1], name: name})
			}
		case dwarf.TagInlinedSubroutine:
			rs, _ := d.Ranges(e)
			origin, _ := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			for _, rg := range rs {
				pending = append(pending, pendingRange{inlRange{lo: rg[0], hi: rg[1], depth: depth}, origin})
			}
		}
		if e.Children {
			depth++
		}
	}
	slices.SortFunc(in.funcs, func(a, b inlFunc) int { return cmp.Compare(a.lo, b.lo) })
	for _, p := range pending {
		if p.name = origins[p.origin]; p.name == "" {
			continue
		}
		if f := in.function(p.lo); f != nil {
			f.inlined = append(f.inlined, p.inlRange)
		}
	}
	for i := range in.funcs {
		slices.SortStableFunc(in.funcs[i].inlined, func(a, b inlRange) int { return cmp.Compare(a.depth, b.depth) })
	}
	return in, nil
}

// function is the compiled function whose code holds addr, or nil.
func (in *Inlining) function(addr uint64) *inlFunc {
	i := sort.Search(len(in.funcs), func(i int) bool { return in.funcs[i].lo > addr }) - 1
	if i < 0 || addr >= in.funcs[i].hi {
		return nil
	}
	return &in.funcs[i]
}

// Frames are the functions whose code addr is, innermost first and the
// compiled function last; nil when no function holds addr.
func (in *Inlining) Frames(addr uint64) []string {
	f := in.function(addr)
	if f == nil {
		return nil
	}
	out := []string{f.name}
	for _, r := range f.inlined {
		if r.lo <= addr && addr < r.hi {
			out = append(out, r.name)
		}
	}
	slices.Reverse(out)
	return out
}

// Stripped reports whether exe has no symbol table: callgrind then names
// its functions by address.
func Stripped(exe string) bool {
	f, err := elf.Open(exe)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Symbols()
	return errors.Is(err, elf.ErrNoSymbols)
}
