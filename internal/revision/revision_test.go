package revision

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// repo is a git repository of two commits of one file, "a" then "b".
func repo(t *testing.T) (*Repo, [2]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	var commits [2]string
	run := func(args ...string) string {
		t.Helper()
		out, err := Git(dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	run("init", "-q")
	for i, content := range []string{"a", "b"} {
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content), 0o644)
		run("add", ".")
		run("commit", "-q", "-m", content)
		commits[i] = run("rev-parse", "HEAD")
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, commits
}

func TestPairResolvesTheWorkingTreeAndRefusesADirtyHead(t *testing.T) {
	r, c := repo(t)
	revs, err := r.Pair("HEAD~1", ".", false)
	if err != nil || revs[0].Commit != c[0] || revs[1].Commit != c[1] || !revs[1].Tree || revs[0].Tree {
		t.Fatalf("clean tree: %+v %v", revs, err)
	}
	os.WriteFile(filepath.Join(r.Root, "new.txt"), []byte("x"), 0o644) // untracked: compiled too
	if revs, _ := r.Pair("HEAD~1", ".", false); revs[1].Commit != c[1]+"+dirty" || Short(revs[1].Commit) != c[1][:12]+"+dirty" {
		t.Errorf("untracked file: experiment %q, want %s+dirty", revs[1].Commit, c[1])
	}
	os.WriteFile(filepath.Join(r.Root, "f.txt"), []byte("changed"), 0o644)
	_, err = r.Pair(c[0], "HEAD", false)
	var ue *UsageError
	if !errors.Is(err, ErrDirtyHead) || !errors.As(err, &ue) {
		t.Errorf("HEAD with uncommitted changes: %v, want ErrDirtyHead as a usage error", err)
	}
	if revs, err := r.Pair(c[0], "HEAD", true); err != nil || revs[1].Commit != c[1] || revs[1].Tree {
		t.Errorf("allowed dirty HEAD: %+v %v", revs, err)
	}
	for _, bad := range []string{"nosuchrev", "--upload-pack=x", "-x"} {
		if _, err := r.Resolve(bad); !errors.As(err, &ue) {
			t.Errorf("Resolve(%q): %v, want a usage error", bad, err)
		}
	}
	if Short(c[0]) != c[0][:12] {
		t.Errorf("Short(%s) = %s", c[0], Short(c[0]))
	}
}

func TestOpenOutsideARepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	var ue *UsageError
	if _, err := Open(t.TempDir()); !errors.As(err, &ue) || !strings.Contains(err.Error(), "not in a git repository") {
		t.Errorf("Open outside a repository: %v", err)
	}
}

// TestWorkspaceChecksOutAndRemovesWorktrees: a checkout holds the
// revision's tree, the working tree is not checked out, and Close leaves
// no worktree and no directory behind.
func TestWorkspaceChecksOutAndRemovesWorktrees(t *testing.T) {
	r, c := repo(t)
	ws, err := r.NewWorkspace("ab", nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := ws.Checkout(Revision{Name: "baseline", Commit: c[0]})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "f.txt")); string(b) != "a" {
		t.Errorf("baseline checkout holds %q, want the first commit's a", b)
	}
	if tree, _ := ws.Checkout(Revision{Name: "experiment", Commit: c[1], Tree: true}); tree != r.Root {
		t.Errorf("the working tree is checked out at %s, want %s itself", tree, r.Root)
	}
	if list, _ := Git(r.Root, "worktree", "list"); strings.Count(list, "\n") != 1 {
		t.Errorf("worktrees while open: %q, want the main one and the baseline", list)
	}
	ws.Close()
	if list, _ := Git(r.Root, "worktree", "list"); strings.Count(list, "\n") != 0 {
		t.Errorf("worktrees after Close: %q", list)
	}
	if _, err := os.Stat(ws.Dir); !os.IsNotExist(err) {
		t.Errorf("the workspace directory survived Close: %v", err)
	}
}

// TestRemoveStaleWorktrees removes the worktrees a killed command left,
// and no other.
func TestRemoveStaleWorktrees(t *testing.T) {
	r, c := repo(t)
	base := t.TempDir()
	stale := filepath.Join(base, "benchctl-nightly-killed", "baseline-src")
	mine := filepath.Join(base, "my-checkout")
	for _, p := range []string{stale, mine} {
		if _, err := Git(r.Root, "worktree", "add", "--detach", p, c[0]); err != nil {
			t.Fatal(err)
		}
	}
	r.RemoveStaleWorktrees()
	list, _ := Git(r.Root, "worktree", "list")
	if strings.Contains(list, stale) || !strings.Contains(list, mine) {
		t.Errorf("after RemoveStaleWorktrees: %q; want %s gone and %s kept", list, stale, mine)
	}
}

// TestFindProgramRefusesWhatIsNotAMainPackage, and a test binary's own
// build info names no program.
func TestFindProgramRefusesWhatIsNotAMainPackage(t *testing.T) {
	root, _ := filepath.Abs("../..")
	var ue *UsageError
	if _, err := FindProgram(".", root, ""); !errors.Is(err, ErrUnknownProgram) || !errors.As(err, &ue) {
		t.Errorf("no target in a test binary: %v, want ErrUnknownProgram", err)
	}
	_, err := FindProgram(".", root, "github.com/ledgerbench/ledgerbench/harness")
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "is package harness, not a main package") {
		t.Errorf("a library package: %v", err)
	}
	p, err := FindProgram(".", root, "github.com/ledgerbench/ledgerbench/cmd/benchctl")
	if err != nil || p.ModuleRel != "." || p.PkgRel != filepath.Join("cmd", "benchctl") {
		t.Errorf("cmd/benchctl: %+v %v", p, err)
	}
}

// TestShallowCloneSaysWhy: a revision missing from a shallow clone is
// named as such, with how to get the history.
func TestShallowCloneSaysWhy(t *testing.T) {
	r, _ := repo(t)
	dst := filepath.Join(t.TempDir(), "shallow")
	if _, err := Git(t.TempDir(), "clone", "-q", "--depth", "1", "file://"+r.Root, dst); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve("HEAD~1"); err == nil || !strings.Contains(err.Error(), "shallow clone") || !strings.Contains(err.Error(), "git fetch --unshallow") {
		t.Errorf("HEAD~1 of a shallow clone: %v", err)
	}
	if _, err := r.Resolve("nosuchrev"); err == nil || strings.Contains(err.Error(), "shallow") {
		t.Errorf("a missing revision of a full clone: %v", err)
	}
}

// TestRemoveStaleWorktreesSparesTheLiving: a worktree whose workspace's
// owner is alive (another command beside this one, with --ignore-lock)
// is kept; one whose owner is dead, or that names none, is removed.
func TestRemoveStaleWorktreesSparesTheLiving(t *testing.T) {
	r, c := repo(t)
	live, err := r.NewWorkspace("ab", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	mine, err := live.Checkout(Revision{Name: "baseline", Commit: c[0]})
	if err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(t.TempDir(), "benchctl-ab-dead")
	os.MkdirAll(dead, 0o755)
	gone := exec.Command("true")
	gone.Run()
	os.WriteFile(filepath.Join(dead, ownerFile), []byte(strconv.Itoa(gone.Process.Pid)), 0o644)
	deadTree := filepath.Join(dead, "baseline-src")
	if _, err := Git(r.Root, "worktree", "add", "--detach", deadTree, c[0]); err != nil {
		t.Fatal(err)
	}
	r.RemoveStaleWorktrees()
	list, _ := Git(r.Root, "worktree", "list")
	if !strings.Contains(list, mine) || strings.Contains(list, deadTree) {
		t.Errorf("after RemoveStaleWorktrees: %q; want %s kept (its owner runs) and %s gone", list, mine, deadTree)
	}
}

// TestCheckoutInitializesSubmodules: a revision's checkout holds its
// submodules' trees too, as a clone with --recurse-submodules would, so a
// build that needs them (a replace into a submodule) builds.
func TestCheckoutInitializesSubmodules(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	// Submodules of local paths need the file protocol, which git refuses
	// for submodules unless allowed.
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "protocol.file.allow")
	t.Setenv("GIT_CONFIG_VALUE_0", "always")
	lib := t.TempDir()
	run := func(dir string, args ...string) string {
		t.Helper()
		out, err := Git(dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	run(lib, "init", "-q")
	os.WriteFile(filepath.Join(lib, "lib.txt"), []byte("from the submodule"), 0o644)
	run(lib, "add", ".")
	run(lib, "commit", "-q", "-m", "lib")
	r, _ := repo(t)
	run(r.Root, "submodule", "add", "-q", lib, "lib")
	run(r.Root, "commit", "-q", "-m", "with lib")
	c := run(r.Root, "rev-parse", "HEAD")
	ws, err := r.NewWorkspace("ab", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	src, err := ws.Checkout(Revision{Name: "baseline", Commit: c})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(src, "lib", "lib.txt")); err != nil || string(b) != "from the submodule" {
		t.Errorf("the checkout's submodule: %q %v", b, err)
	}
	ws.Close()
	if list, _ := Git(r.Root, "worktree", "list"); strings.Count(list, "\n") != 0 {
		t.Errorf("a worktree with a submodule survived Close: %q", list)
	}
	if _, err := os.Stat(src); !os.IsNotExist(err) {
		t.Errorf("%s survived Close: %v", src, err)
	}
}
