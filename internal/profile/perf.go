package profile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// PerfEvents are the hardware events --prof perf counts per op.
var PerfEvents = []string{"cycles", "instructions", "cache-misses", "branch-misses"}

// Environment variables that hand a fork perf's control and ack FIFOs.
const (
	PerfCtlEnv = "LEDGERBENCH_PERF_CTL"
	PerfAckEnv = "LEDGERBENCH_PERF_ACK"
)

// PerfStatus reports whether `perf stat` can count events here, and if
// not, why.
func PerfStatus(events []string) (bool, string) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return false, "unavailable: perf is not installed (Debian package linux-perf)"
	}
	out, err := exec.Command(perf, "stat", "-x,", "-e", strings.Join(events, ","), "true").CombinedOutput()
	text := string(out)
	if err != nil || strings.Contains(text, "not supported") {
		return false, fmt.Sprintf("unavailable: perf stat cannot count %s on this host (a virtual machine without a PMU, or perf_event_paranoid): %s",
			strings.Join(events, ","), strings.TrimSpace(firstLine(text)))
	}
	return true, "available"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// PerfCommand returns the command that runs exe under `perf stat` with its
// counters disabled until the fork enables them through the control FIFO
// (created in dir) around its measured loop, the environment that tells the
// fork where the FIFOs are, and the file perf writes.
func PerfCommand(exe, dir string, events []string, args ...string) (path string, argv, env []string, out string, err error) {
	perf, control, env, err := perfControlled(dir)
	if err != nil {
		return "", nil, nil, "", err
	}
	out = filepath.Join(dir, "perf.csv")
	argv = append(append(append([]string{"stat", "-x,", "-o", out, "-e", strings.Join(events, ",")}, control...), "--", exe), args...)
	return perf, argv, env, out, nil
}

// perfControlled returns perf's path, the arguments that start its
// events disabled and hand their control to the fork through FIFOs
// (created in dir), and the environment that names the FIFOs to the fork.
func perfControlled(dir string) (perf string, control, env []string, err error) {
	if perf, err = exec.LookPath("perf"); err != nil {
		return "", nil, nil, errors.New("unavailable: perf is not installed")
	}
	ctl, ack := filepath.Join(dir, "perf.ctl"), filepath.Join(dir, "perf.ack")
	for _, f := range []string{ctl, ack} {
		os.Remove(f)
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			return "", nil, nil, fmt.Errorf("mkfifo %s: %w", f, err)
		}
	}
	return perf, []string{"--delay=-1", "--control=fifo:" + ctl + "," + ack}, []string{PerfCtlEnv + "=" + ctl, PerfAckEnv + "=" + ack}, nil
}

// ParsePerfStat reads `perf stat -x,` output: event name → count.
func ParsePerfStat(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	counts := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, ",")
		if len(fields) < 3 {
			return nil, fmt.Errorf("%s: unexpected line %q", path, line)
		}
		event := fields[2]
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: event %s was not counted (%s)", path, event, fields[0])
		}
		counts[event] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("%s: no counts: not perf stat -x output", path)
	}
	return counts, nil
}

// PerfControl is the fork's end of perf's control FIFOs.
type PerfControl struct{ ctl, ack *os.File }

// OpenPerfControl opens the FIFOs named in the environment, or returns nil
// when the fork does not run under perf. The FIFOs are opened read-write,
// which never blocks on Linux.
func OpenPerfControl() (*PerfControl, error) {
	ctl, ack := os.Getenv(PerfCtlEnv), os.Getenv(PerfAckEnv)
	if ctl == "" || ack == "" {
		return nil, nil
	}
	c, err := os.OpenFile(ctl, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	a, err := os.OpenFile(ack, os.O_RDWR, 0)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &PerfControl{ctl: c, ack: a}, nil
}

func (p *PerfControl) command(cmd string) error {
	if p == nil {
		return nil
	}
	if _, err := p.ctl.WriteString(cmd + "\n"); err != nil {
		return fmt.Errorf("perf control %s: %w", cmd, err)
	}
	buf := make([]byte, 5)
	n, err := p.ack.Read(buf)
	if err != nil || !strings.HasPrefix(string(buf[:n]), "ack") {
		return fmt.Errorf("perf control %s: no ack (%q, %v)", cmd, buf[:n], err)
	}
	return nil
}

// Enable starts perf's counters; Disable stops them. Both are no-ops on a
// nil control.
func (p *PerfControl) Enable() error  { return p.command("enable") }
func (p *PerfControl) Disable() error { return p.command("disable") }
