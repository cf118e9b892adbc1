package gotest

import (
	"fmt"
	"regexp"
	"strings"
)

// Pattern is a -bench pattern split as go test splits it: into
// alternatives at each | outside brackets and parentheses, and each
// alternative into levels at each such slash. An empty Pattern matches
// every benchmark.
type Pattern struct {
	src  string
	alts [][]*regexp.Regexp
}

// Split parses a -bench pattern ("" matches everything). Each level must
// compile as a regular expression.
func Split(pattern string) (*Pattern, error) {
	p := &Pattern{src: pattern}
	if pattern == "" {
		return p, nil
	}
	for _, alt := range split(pattern, '|') {
		var levels []*regexp.Regexp
		for _, e := range split(alt, '/') {
			re, err := regexp.Compile(e)
			if err != nil {
				return nil, fmt.Errorf("%s: element %q: %w", pattern, e, err)
			}
			levels = append(levels, re)
		}
		p.alts = append(p.alts, levels)
	}
	return p, nil
}

// split splits s at each sep outside a character class or a group (a
// slash inside [a/b] or (a/b) belongs to its element).
func split(s string, sep byte) []string {
	var out []string
	cs, cp := 0, 0 // inside a class; group depth
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			cs++
		case ']':
			if cs > 0 {
				cs--
			}
		case '(':
			if cs == 0 {
				cp++
			}
		case ')':
			if cs == 0 && cp > 0 {
				cp--
			}
		case sep:
			if cs == 0 && cp == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// String is the pattern as given.
func (p *Pattern) String() string { return p.src }

// MatchTop reports whether a top-level benchmark name matches the first
// level of one of the pattern's alternatives.
func (p *Pattern) MatchTop(name string) bool {
	return len(p.alts) == 0 || len(p.below(name)) > 0
}

// Match reports whether a full benchmark name (its levels joined by
// slashes) matches one alternative as go test matches a benchmark that
// reports results: the name has at least the alternative's levels, and
// each of them matches the name's element at that level (deeper levels
// of the name match whatever they are). A name with fewer levels matches
// only partially: go test runs it to find sub-benchmarks, and reports no
// result of it.
func (p *Pattern) Match(name string) bool {
	if len(p.alts) == 0 {
		return true
	}
	elems := strings.Split(name, "/")
	for _, levels := range p.alts {
		if len(elems) < len(levels) {
			continue
		}
		ok := true
		for i, re := range levels {
			if !re.MatchString(elems[i]) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// below returns the alternatives that select top, each rewritten to
// match top exactly at the first level: the -test.bench value that runs
// top and the sub-benchmarks the pattern selects under it.
func (p *Pattern) below(top string) []string {
	if len(p.alts) == 0 {
		return []string{"^" + regexp.QuoteMeta(top) + "$"}
	}
	var out []string
	for _, levels := range p.alts {
		if !levels[0].MatchString(top) {
			continue
		}
		parts := []string{"^" + regexp.QuoteMeta(top) + "$"}
		for _, re := range levels[1:] {
			parts = append(parts, re.String())
		}
		out = append(out, strings.Join(parts, "/"))
	}
	return out
}

// Exact is the -test.bench value that selects exactly the benchmark of
// the full name, and at every level above it only its parent.
func Exact(name string) string {
	elems := strings.Split(name, "/")
	for i, e := range elems {
		elems[i] = "^" + regexp.QuoteMeta(e) + "$"
	}
	return strings.Join(elems, "/")
}
