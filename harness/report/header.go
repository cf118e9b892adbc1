package report

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/cpuid/v2"
	"golang.org/x/sys/unix"
)

// Version is benchctl's version, written into every result file.
const Version = "0.1.0"

// Header is the file-level configuration of a results file: the keys of
// DESIGN.md §4, in order, written as benchfmt config lines.
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
	Commit     string
	CommitTime string
	Dirty      string
	// Command is how the file was made (a comment line).
	Command string
	Started time.Time
}

// keys returns the header as ordered config pairs (pkg is per result).
func (h *Header) keys() [][2]string {
	return [][2]string{
		{"goos", h.GOOS}, {"goarch", h.GOARCH}, {"cpu", h.CPU}, {"go", h.Go},
		{"benchctl-version", h.BenchctlVersion}, {"machine", h.Machine},
		{"machine-id", h.MachineID}, {"env-id", h.EnvID}, {"host-pinned", h.HostPinned},
		{"commit", h.Commit}, {"commit-time", h.CommitTime}, {"dirty", h.Dirty},
	}
}

// CollectHeader describes this host and the source tree in dir (the
// current directory when empty). It never fails: unknown facts are
// "unknown".
func CollectHeader(dir, command string) Header {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	c := cpuid.CPU
	brand := strings.TrimSpace(c.BrandName)
	if brand == "" {
		brand = "unknown"
	}
	var uts unix.Utsname
	kernel := "unknown"
	if unix.Uname(&uts) == nil {
		kernel = unix.ByteSliceToString(uts.Release[:])
	}
	smt := "no"
	if c.ThreadsPerCore > 1 {
		smt = "yes"
	}
	memTotal := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		memTotal, _, _ = strings.Cut(string(b), "\n")
	}
	h := Header{
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPU: brand, Go: runtime.Version(),
		BenchctlVersion: Version, Machine: host,
		MachineID: shortHash(brand, c.VendorString, itoa(c.Family), itoa(c.Model), itoa(c.Stepping),
			itoa(c.PhysicalCores), itoa(c.LogicalCores), itoa(runtime.NumCPU()), itoa(c.Cache.L1D), itoa(c.Cache.L2), itoa(c.Cache.L3), memTotal),
		EnvID:      shortHash(kernel, governor(), smt, runtime.Version(), itoa(runtime.GOMAXPROCS(0))),
		HostPinned: "no",
		HostNote:   "host checks (governor, turbo, frequency pinning) are not run by this build: the clock is not verified",
		Commit:     "unknown", CommitTime: "unknown", Dirty: "unknown",
		Command: command, Started: time.Now().UTC(),
	}
	if out, err := git(dir, "log", "-1", "--format=%H %cI"); err == nil {
		if hash, t, ok := strings.Cut(out, " "); ok {
			h.Commit, h.CommitTime = hash, t
		}
		if st, err := git(dir, "status", "--porcelain", "--untracked-files=no"); err == nil {
			h.Dirty = map[bool]string{true: "yes", false: "no"}[st != ""]
		}
	}
	return h
}

func governor() string {
	b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	if err != nil {
		return "none"
	}
	return strings.TrimSpace(string(b))
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

func shortHash(parts ...string) string {
	s := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(s[:6])
}

func itoa(n int) string { return strconv.Itoa(n) }
