package revision

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Workspace is a temporary directory for one command's builds, with the
// worktrees it checked out there. Close removes both.
type Workspace struct {
	Repo *Repo
	Dir  string
	// Say tells what is being built (nil: nothing is told).
	Say func(format string, args ...any)
	// Cache, when set, keeps and reuses the programs built at commits.
	Cache    *BuildCache
	cleanups []func()
}

// NewWorkspace makes a workspace in a new temporary directory named
// benchctl-<kind>-*.
func (r *Repo) NewWorkspace(kind string, say func(string, ...any)) (*Workspace, error) {
	dir, err := os.MkdirTemp("", "benchctl-"+kind+"-")
	if err != nil {
		return nil, err
	}
	// Its owner, so that another command removes its worktrees only once
	// this process is gone.
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Workspace{Repo: r, Dir: dir, Say: say}, nil
}

// ownerFile holds, in a workspace's directory, the PID of the process
// that made it.
const ownerFile = "owner.pid"

// ownerAlive reports whether the process that made the workspace at dir
// still runs; false when it names none (a workspace of an older version).
func ownerAlive(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A zombie (exited, not yet reaped) runs no more.
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if i := strings.LastIndexByte(string(stat), ')'); err == nil && i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	return true
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
	// A worktree holds no submodule trees: the revision's build may need
	// them (a replace into a submodule), as a recursive clone has them.
	if _, err := os.Stat(filepath.Join(src, ".gitmodules")); err == nil {
		if _, err := Git(src, "submodule", "update", "--init", "--recursive", "--quiet"); err != nil {
			return "", fmt.Errorf("%s %s: its submodules: %w", rev.Name, Short(rev.Commit), err)
		}
	}
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
