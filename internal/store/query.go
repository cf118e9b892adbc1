package store

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/storage/query"
)

// ErrQuery marks a query that cannot be turned into SQL.
var ErrQuery = errors.New("bad query")

// A Query is a parsed perfdata query: words key:value (equal), key<value
// and key>value (ordered as strings), all of which a result must match.
// Keys are configuration keys (machine-id, commit, pkg, …), the server's
// upload labels (upload, upload-part, upload-file, upload-time, by),
// name for a benchmark's base name (Encode for BenchmarkEncode/size=8-4)
// and /key for its name keys (/size:8). Words split as in a shell, so
// "key:a value" quotes a space.
type Query struct {
	parts []part
	text  string
}

type part struct {
	key   string
	op    byte // ':', '<' or '>'
	value string
}

// MaxQueryWords bounds a query: each word is a condition of the
// database's query, and a thousand held a PostgreSQL backend for the
// request's whole time limit.
const MaxQueryWords = 32

// ParseQuery parses q. An empty query matches everything.
func ParseQuery(q string) (*Query, error) {
	out := &Query{text: q}
	words := query.SplitWords(q)
	if len(words) > MaxQueryWords {
		return nil, fmt.Errorf("%w: %d words, at most %d", ErrQuery, len(words), MaxQueryWords)
	}
	for _, w := range words {
		i := strings.IndexAny(w, ":<>")
		if i < 0 {
			return nil, fmt.Errorf("%w: %q has no operator (want key:value, key<value or key>value)", ErrQuery, w)
		}
		key := w[:i]
		if key == "" {
			return nil, fmt.Errorf("%w: %q has no key", ErrQuery, w)
		}
		for _, c := range key {
			if unicode.IsUpper(c) || unicode.IsSpace(c) || unicode.IsControl(c) {
				return nil, fmt.Errorf("%w: key %q: keys are lower case, without spaces", ErrQuery, key)
			}
		}
		if strings.HasPrefix(key, "/") && len(key) == 1 {
			return nil, fmt.Errorf("%w: %q: a name key needs a name after /", ErrQuery, w)
		}
		out.parts = append(out.parts, part{key: key, op: w[i], value: w[i+1:]})
	}
	return out, nil
}

func (q *Query) String() string { return q.text }

// where spells the query as a condition on files f, with its arguments.
// It selects every file holding a matching result (and maybe others: the
// results are then filtered one by one by matches). Values compare byte
// by byte, as matches compares them, on every back end: SQLite's BINARY
// collation does, and PostgreSQL's "C" collation (its database's default
// may follow a locale, or ICU).
func (q *Query) where(d dialect) (string, []any) {
	conds := []string{"1 = 1"}
	var args []any
	for _, p := range q.parts {
		op := map[byte]string{':': "=", '<': "<", '>': ">"}[p.op]
		if d == postgres && p.op != ':' {
			op = `COLLATE "C" ` + op
		}
		switch {
		case p.key == "name":
			conds = append(conds, `f.id IN (SELECT p.file FROM points p WHERE p.series IN
				(SELECT s.id FROM series s JOIN benchmarks b ON b.id = s.benchmark WHERE b.base `+op+` ?))`)
		case strings.HasPrefix(p.key, "/"):
			conds = append(conds, `f.id IN (SELECT p.file FROM points p WHERE p.series IN
				(SELECT s.id FROM series s JOIN bench_labels l ON l.benchmark = s.benchmark WHERE l.key = ? AND l.value `+op+` ?))`)
			args = append(args, p.key)
		default:
			conds = append(conds, `EXISTS (SELECT 1 FROM file_labels l WHERE l.file = f.id AND l.name = ? AND l.value `+op+` ?)`)
			args = append(args, p.key)
		}
		args = append(args, p.value)
	}
	return strings.Join(conds, " AND "), args
}

// matches reports whether result r, with its server labels, matches.
func (q *Query) matches(r *benchfmt.Result, server map[string]string) bool {
	for _, p := range q.parts {
		var v string
		var ok bool
		switch {
		case p.key == "name":
			v, ok = string(r.Name.Base()), true
		case strings.HasPrefix(p.key, "/"):
			for _, kv := range nameKeys("Benchmark" + string(r.Name.Full())) {
				if kv[0] == p.key {
					v, ok = kv[1], true
				}
			}
		default:
			if v, ok = server[p.key]; !ok {
				if c := r.GetConfig(p.key); c != "" {
					v, ok = c, true
				}
			}
		}
		if !ok {
			return false
		}
		switch p.op {
		case ':':
			ok = v == p.value
		case '<':
			ok = v < p.value
		case '>':
			ok = v > p.value
		}
		if !ok {
			return false
		}
	}
	return true
}
