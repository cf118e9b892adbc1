package revision

import (
	"fmt"
	"strings"
	"time"
)

// Commit is one commit of a range: its hash, its subject and its
// committer date.
type Commit struct {
	Hash    string    `json:"hash"`
	Subject string    `json:"subject"`
	Date    time.Time `json:"date"`
}

// Describe is the commit named by c (a hash).
func (r *Repo) Describe(c string) (Commit, error) {
	out, err := r.git("show", "-s", "--format=%H%x00%cI%x00%s", c)
	if err != nil {
		return Commit{}, err
	}
	return parseCommit(out)
}

func parseCommit(line string) (Commit, error) {
	f := strings.SplitN(line, "\x00", 3)
	if len(f) != 3 {
		return Commit{}, fmt.Errorf("git: unexpected commit line %q", line)
	}
	d, err := time.Parse(time.RFC3339, f[1])
	if err != nil {
		return Commit{}, fmt.Errorf("git: commit %s: %w", f[0], err)
	}
	return Commit{Hash: f[0], Subject: f[2], Date: d}, nil
}

// FirstParents lists the commits from good (excluded) to bad (included)
// along bad's first parents, oldest first: the range a bisection
// searches. good must be an ancestor of bad, and the range not empty;
// otherwise the error is a *UsageError that says why.
func (r *Repo) FirstParents(good, bad string) ([]Commit, error) {
	if good == bad {
		return nil, usage("good and bad are the same commit %s: there is no range to search", Short(good))
	}
	if _, err := r.git("merge-base", "--is-ancestor", good, bad); err != nil {
		return nil, usage("good %s is not an ancestor of bad %s: a bisection searches the history from good to bad (swap them, or pick a good revision on bad's history)", Short(good), Short(bad))
	}
	out, err := r.git("rev-list", "--first-parent", "--reverse", "--format=%H%x00%cI%x00%s", "--no-commit-header", good+".."+bad)
	if err != nil {
		return nil, err
	}
	var cs []Commit
	for line := range strings.SplitSeq(out, "\n") {
		if line == "" {
			continue
		}
		c, err := parseCommit(line)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return nil, usage("no commits between good %s and bad %s along bad's first parents", Short(good), Short(bad))
	}
	return cs, nil
}

// Merged is, for a merge commit c, the merge base of its first two
// parents and its second parent: the range of the branch it merged,
// which a bisection along c's first parents cannot enter. ok is false
// for a commit of one parent.
func (r *Repo) Merged(c string) (base, tip string, ok bool) {
	tip, err := r.git("rev-parse", "--verify", "--quiet", c+"^2")
	if err != nil || tip == "" {
		return "", "", false
	}
	if base, err = r.git("merge-base", c+"^1", tip); err != nil {
		return "", "", false
	}
	return base, tip, true
}

// Parent is c's first parent ("" for a root commit).
func (r *Repo) Parent(c string) string {
	p, err := r.git("rev-parse", "--verify", "--quiet", c+"^1")
	if err != nil {
		return ""
	}
	return p
}
