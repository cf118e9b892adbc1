package profile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// CallgrindCost is the instructions callgrind counted at one position of
// a function: executed there (Self), or in a call made there (Call, to
// Callee, with everything the callee ran).
type CallgrindCost struct {
	Function string // callgrind's function: the symbol, inlined code included
	File     string // the source file of the position
	Addr     uint64 // the instruction's address; 0 without --dump-instr=yes
	Line     int    // the source line; 0 when callgrind had no line table
	Self     int64
	Callee   string
	Call     int64
}

// Callgrind is a callgrind output file's costs by position, in the
// order of the file, and its total instructions.
type Callgrind struct {
	Total int64
	Costs []CallgrindCost
}

// ReadCallgrind reads a callgrind output file (the format of
// valgrind's callgrind_annotate, with its name and position
// compression), counting the first event, Ir.
func ReadCallgrind(path string) (*Callgrind, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cg, err := parseCallgrind(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cg, nil
}

// cgParser is the state of one callgrind file's reading: the compressed
// names seen, the current file and function, the last position (which
// the next position's "+n", "-n" and "*" are relative to), and a call
// whose cost line comes next.
type cgParser struct {
	names     map[string]map[string]string // by kind (fl, fn, ...), id → name
	instr     bool                         // positions: instr line
	fn, file  string
	fl        string // the function's own file (fi/fe switch back to it)
	addr      uint64
	line      int64
	callee    string
	inCall    bool
	cg        Callgrind
	hasTotals bool
}

func parseCallgrind(r io.Reader) (*Callgrind, error) {
	p := &cgParser{names: map[string]map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if err := p.parseLine(sc.Text()); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !p.hasTotals {
		return nil, fmt.Errorf("no totals line: not a callgrind output file")
	}
	return &p.cg, nil
}

// parseLine reads one line of the file.
func (p *cgParser) parseLine(s string) error {
	if s == "" || s[0] == '#' {
		return nil
	}
	if c := s[0]; c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*' {
		return p.cost(s)
	}
	key, val, _ := strings.Cut(s, "=")
	switch key {
	case "fl":
		p.fl = p.name(key, val)
		p.file = p.fl
	case "fi", "fe":
		p.file = p.name("fl", val)
	case "fn":
		p.fn, p.file = p.name(key, val), p.fl
	case "cfn":
		p.callee = p.name("fn", val)
	case "cfi", "cfl":
		p.name("fl", val)
	case "ob", "cob":
		p.name("ob", val)
	case "calls":
		p.inCall = true
	case "jump", "jcnd":
		// Jumps carry no cost of their own (only with --collect-jumps).
	default:
		return p.header(s)
	}
	return nil
}

// header reads a "key: value" line; the totals or summary line is the
// whole count.
func (p *cgParser) header(s string) error {
	key, val, ok := strings.Cut(s, ":")
	if !ok {
		return fmt.Errorf("%q: neither a specification nor a header", s)
	}
	val = strings.TrimSpace(val)
	switch key {
	case "positions":
		p.instr = strings.Fields(val)[0] == "instr"
	case "events":
		if f := strings.Fields(val); len(f) == 0 || f[0] != "Ir" {
			return fmt.Errorf("events %q: the first must be Ir", val)
		}
	case "totals", "summary":
		n, err := strconv.ParseInt(strings.Fields(val + " 0")[0], 10, 64)
		if err != nil {
			return fmt.Errorf("bad %s line %q", key, s)
		}
		p.cg.Total, p.hasTotals = n, true
	}
	return nil
}

// name resolves a compressed name: "(id) name" defines id, "(id)" refers
// to it, a plain name is itself.
func (p *cgParser) name(kind, val string) string {
	if !strings.HasPrefix(val, "(") {
		return val
	}
	id, name, _ := strings.Cut(val[1:], ")")
	m := p.names[kind]
	if m == nil {
		m = map[string]string{}
		p.names[kind] = m
	}
	if name = strings.TrimSpace(name); name != "" {
		m[id] = name
	}
	return m[id]
}

// cost reads a cost line: its position (instr then line, or line) and
// its Ir count; after a calls= line, the call's inclusive cost.
func (p *cgParser) cost(s string) error {
	f := strings.Fields(s)
	want := 1
	if p.instr {
		want = 2
	}
	if len(f) < want {
		return fmt.Errorf("cost line %q: too few positions", s)
	}
	if p.instr {
		a, err := position(f[0], int64(p.addr))
		if err != nil {
			return err
		}
		p.addr = uint64(a)
	}
	l, err := position(f[want-1], p.line)
	if err != nil {
		return err
	}
	p.line = l
	var ir int64
	if len(f) > want {
		if ir, err = strconv.ParseInt(f[want], 10, 64); err != nil {
			return fmt.Errorf("cost line %q: %v", s, err)
		}
	}
	c := CallgrindCost{Function: p.fn, File: p.file, Addr: p.addr, Line: int(p.line)}
	if p.inCall {
		c.Callee, c.Call, p.inCall = p.callee, ir, false
	} else {
		c.Self = ir
	}
	p.cg.Costs = append(p.cg.Costs, c)
	return nil
}

// position reads one compressed position: a number (hexadecimal with
// 0x), "+n" or "-n" from last, or "*" for last.
func position(s string, last int64) (int64, error) {
	switch {
	case s == "*":
		return last, nil
	case s[0] == '+' || s[0] == '-':
		d, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return 0, fmt.Errorf("position %q: %v", s, err)
		}
		return last + d, nil
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("position %q: %v", s, err)
	}
	return int64(v), nil
}
