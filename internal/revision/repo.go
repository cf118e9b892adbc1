package revision

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// UsageError is an error in what the caller asked for, not in the
// repository or the build.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ErrDirtyHead refuses an experiment revision that is HEAD while the
// working tree has uncommitted changes: commit them, measure the working
// tree, or allow a dirty tree.
var ErrDirtyHead = errors.New("the working tree has uncommitted changes")

func usage(format string, args ...any) error { return &UsageError{fmt.Errorf(format, args...)} }

// Repo is the git repository that holds the user's source tree.
type Repo struct {
	Root string // the top of the work tree
}

// Open finds the repository holding dir.
func Open(dir string) (*Repo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, &UsageError{errors.New("git is not installed")}
	}
	root, err := Git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		abs, _ := filepath.Abs(dir)
		return nil, usage("%s is not in a git repository: run this inside the repository whose revisions to compare", abs)
	}
	return &Repo{Root: root}, nil
}

// Git runs git without a shell in dir and returns its trimmed output.
func Git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func (r *Repo) git(args ...string) (string, error) { return Git(r.Root, args...) }

// Revision is one side to build: its role (baseline or experiment), the
// revision as given, and the commit it resolved to ("+dirty" appended
// for a working tree with changes).
type Revision struct {
	Name   string // baseline or experiment
	Rev    string // as given
	Commit string
	Tree   bool // the working tree itself, not a checkout
}

// Short is a commit abbreviated to 12 digits, keeping its "+dirty" mark (the
// working tree over that commit) when it has one.
func Short(c string) string {
	hash, suffix, _ := strings.Cut(c, "+")
	if len(hash) > 12 {
		hash = hash[:12]
	}
	if suffix != "" {
		return hash + "+" + suffix
	}
	return hash
}

// Resolve is the commit that rev names.
func (r *Repo) Resolve(rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", usage("revision %q: must not start with -", rev)
	}
	c, err := r.git("rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || c == "" {
		return "", usage("revision %q does not exist in %s%s", rev, r.Root, r.shallowHint())
	}
	return c, nil
}

// shallowHint says, for a shallow clone, why a revision may be missing.
func (r *Repo) shallowHint() string {
	if s, err := r.git("rev-parse", "--is-shallow-repository"); err == nil && s == "true" {
		return ": it is a shallow clone, which lacks the older history (git fetch --unshallow brings it)"
	}
	return ""
}

// Head is the commit HEAD names.
func (r *Repo) Head() (string, error) { return r.git("rev-parse", "HEAD") }

// LatestTag is the newest tag reachable from HEAD, if there is one.
func (r *Repo) LatestTag() (string, bool) {
	tag, err := r.git("describe", "--tags", "--abbrev=0")
	return tag, err == nil
}

// Pair resolves the baseline base and the experiment head; head "." is
// the working tree as it is (its commit marked +dirty when it has changes,
// untracked files included, since they are compiled too). A head that is
// HEAD with uncommitted changes is refused unless allowDirty.
func (r *Repo) Pair(base, head string, allowDirty bool) (sides [2]Revision, err error) {
	sides[0] = Revision{Name: "baseline", Rev: base}
	if sides[0].Commit, err = r.Resolve(base); err != nil {
		return sides, err
	}
	sides[1] = Revision{Name: "experiment", Rev: head}
	headCommit, err := r.Resolve("HEAD")
	if err != nil {
		return sides, err
	}
	if head == "." {
		dirty, err := r.git("status", "--porcelain")
		if err != nil {
			return sides, err
		}
		sides[1].Commit, sides[1].Tree = headCommit, true
		if dirty != "" {
			sides[1].Commit += "+dirty"
		}
		return sides, nil
	}
	if sides[1].Commit, err = r.Resolve(head); err != nil {
		return sides, err
	}
	dirty, err := r.git("status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return sides, err
	}
	if sides[1].Commit == headCommit && dirty != "" && !allowDirty {
		return sides, &UsageError{fmt.Errorf("%w: %s is HEAD, and the changes would not be measured", ErrDirtyHead, head)}
	}
	return sides, nil
}

// Anchor resolves anchor as the baseline and HEAD as the experiment.
func (r *Repo) Anchor(anchor, head string) ([2]Revision, error) {
	var rs [2]Revision
	c, err := r.git("rev-parse", "--verify", "--quiet", "--end-of-options", anchor+"^{commit}")
	if err != nil || c == "" {
		return rs, usage("anchor %q does not exist in %s%s", anchor, r.Root, r.shallowHint())
	}
	rs[0] = Revision{Name: "baseline", Rev: anchor, Commit: c}
	rs[1] = Revision{Name: "experiment", Rev: "HEAD", Commit: head}
	return rs, nil
}

// worktreeRE matches the worktrees a Workspace makes.
var worktreeRE = regexp.MustCompile(`/benchctl-[a-z]+-[^/]+/(baseline|experiment)-src$`)

// RemoveStaleWorktrees removes the revision worktrees that a command
// killed before its cleanup left registered: those of a workspace whose
// owner no longer runs. A command beside this one (one that ignored the
// run lock) keeps its own.
func (r *Repo) RemoveStaleWorktrees() {
	list, err := r.git("worktree", "list", "--porcelain")
	if err != nil {
		return
	}
	for line := range strings.SplitSeq(list, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok && worktreeRE.MatchString(filepath.ToSlash(p)) && !ownerAlive(filepath.Dir(p)) {
			_, _ = r.git("worktree", "remove", "--force", p)
		}
	}
	_, _ = r.git("worktree", "prune")
}
