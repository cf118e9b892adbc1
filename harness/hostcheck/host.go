package hostcheck

import (
	"io/fs"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/klauspost/cpuid/v2"
	"golang.org/x/sys/unix"
)

// Host is what Check looks at.
type Host struct {
	// FS is rooted at "/" (sysfs and procfs single-value files); Root is
	// the same directory on disk, which Tune and Reset write under.
	FS   fs.FS
	Root string
	// IsRoot reports whether the process may write the knobs.
	IsRoot func() bool
	// ProcRoot is the procfs mount that prometheus/procfs parses.
	ProcRoot string
	CPU      cpuid.CPUInfo
	Kernel   string
	// Probe measures the effective clock (harness.Probe); ProbeSamples
	// runs of it give its stability.
	Probe        func() float64
	ProbeSamples int
	// StealWindow is how long CPU steal time is sampled over.
	StealWindow time.Duration
	Sleep       func(time.Duration)
	GoVersion   string
	Version     string // benchctl's
	Arch        string
	// Build is the build flags that change the measured code (BuildFlags).
	Build string
}

// Local is this machine; probe is the harness's frequency probe.
func Local(version string, probe func() float64) *Host {
	kernel := "unknown"
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		kernel = unix.ByteSliceToString(uts.Release[:])
	}
	return &Host{
		FS: os.DirFS("/"), Root: "/", IsRoot: func() bool { return os.Geteuid() == 0 },
		ProcRoot: "/proc", CPU: cpuid.CPU, Kernel: kernel,
		Probe: probe, ProbeSamples: 5, StealWindow: 200 * time.Millisecond,
		Sleep: time.Sleep, GoVersion: runtime.Version(), Version: version, Arch: runtime.GOARCH,
		Build: BuildFlags(),
	}
}

// read returns a sysfs/procfs file's content, trimmed.
func (h *Host) read(path string) (string, error) {
	b, err := fs.ReadFile(h.FS, path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func (h *Host) exists(path string) bool {
	_, err := fs.Stat(h.FS, path)
	return err == nil
}
