package revision

import (
	"os"
	"path/filepath"
)

// Workspace is a temporary directory for one command's builds, with the
// worktrees it checked out there. Close removes both.
type Workspace struct {
	Repo *Repo
	Dir  string
	// Say tells what is being built (nil: nothing is told).
	Say      func(format string, args ...any)
	cleanups []func()
}

// NewWorkspace makes a workspace in a new temporary directory named
// benchctl-<kind>-*.
func (r *Repo) NewWorkspace(kind string, say func(string, ...any)) (*Workspace, error) {
	dir, err := os.MkdirTemp("", "benchctl-"+kind+"-")
	if err != nil {
		return nil, err
	}
	return &Workspace{Repo: r, Dir: dir, Say: say}, nil
}

func (w *Workspace) say(format string, args ...any) {
	if w.Say != nil {
		w.Say(format, args...)
	}
}

// Checkout makes rev's tree available (a detached worktree, or the
// working tree itself) and returns its root.
func (w *Workspace) Checkout(rev Revision) (string, error) {
	if rev.Tree {
		return w.Repo.Root, nil
	}
	src := filepath.Join(w.Dir, rev.Name+"-src")
	if _, err := w.Repo.git("worktree", "add", "--detach", src, rev.Commit); err != nil {
		return "", err
	}
	w.cleanups = append(w.cleanups, func() { _, _ = w.Repo.git("worktree", "remove", "--force", src) })
	return src, nil
}

// Close removes the worktrees and the directory.
func (w *Workspace) Close() {
	for _, c := range w.cleanups {
		c()
	}
	w.cleanups = nil
	os.RemoveAll(w.Dir)
}
