package report

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Version is benchctl's version, written into every result file.
const Version = "0.1.0"

// Header is the file-level configuration of a results file: the keys of
// the results format of docs/architecture.md, in order, written as benchfmt config lines.
type Header struct {
	GOOS, GOARCH    string
	CPU             string
	Go              string
	BenchctlVersion string
	Machine         string
	MachineID       string
	EnvID           string
	// HostPinned is "yes" only when the host checks verified a pinned
	// clock; HostNote says why not.
	HostPinned string
	HostNote   string
	// BuildFlags names the build flags that change the measured code
	// (hostcheck.BuildFlags); "" for a plain build, which has no key.
	BuildFlags string
	Commit     string
	CommitTime string
	Dirty      string
	// Command is how the file was made (a comment line); Notes are more
	// comment lines about how (an A/B run's overlay, say).
	Command string
	Notes   []string
	Started time.Time
	// In an A/B file, Toolchain (baseline or experiment) is the only key
	// that varies, and the commits of both sides replace commit,
	// commit-time and dirty.
	Toolchain        string
	BaselineCommit   string
	ExperimentCommit string
}

// keys returns the header as ordered config pairs (pkg is per result).
func (h *Header) keys() [][2]string {
	kv := [][2]string{
		{"goos", h.GOOS}, {"goarch", h.GOARCH}, {"cpu", h.CPU}, {"go", h.Go},
		{"benchctl-version", h.BenchctlVersion}, {"machine", h.Machine},
		{"machine-id", h.MachineID}, {"env-id", h.EnvID}, {"host-pinned", h.HostPinned},
	}
	if h.BuildFlags != "" {
		kv = append(kv, [2]string{"build-flags", h.BuildFlags})
	}
	if h.Toolchain != "" {
		return append(kv, [2]string{"baseline-commit", h.BaselineCommit}, [2]string{"experiment-commit", h.ExperimentCommit},
			[2]string{"toolchain", h.Toolchain})
	}
	return append(kv, [2]string{"commit", h.Commit}, [2]string{"commit-time", h.CommitTime}, [2]string{"dirty", h.Dirty})
}

// CollectHeader describes the build and the source tree in dir (the
// current directory when empty). It never fails: unknown facts are
// "unknown". The host's verdict and fingerprints (host-pinned, machine-id,
// env-id) come from the host checks, which the caller fills in.
func CollectHeader(dir, command string) Header {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	h := Header{
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPU: CPUName(), Go: runtime.Version(),
		BenchctlVersion: Version, Machine: host,
		MachineID: "unknown", EnvID: "unknown", HostPinned: "no", HostNote: "the host was not checked",
		Commit: "unknown", CommitTime: "unknown", Dirty: "unknown",
		Command: command, Started: time.Now().UTC(),
	}
	if out, err := git(dir, "log", "-1", "--format=%H %cI"); err == nil {
		if hash, t, ok := strings.Cut(out, " "); ok {
			h.Commit, h.CommitTime = hash, t
		}
		// Untracked files count, as they do for Go's own vcs.modified: an
		// untracked .go file is compiled in.
		if st, err := git(dir, "status", "--porcelain"); err == nil {
			h.Dirty = map[bool]string{true: "yes", false: "no"}[st != ""]
		}
	}
	return h
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}
