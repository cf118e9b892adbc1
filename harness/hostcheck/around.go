package hostcheck

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// WaitCool waits until every thermal zone reads at most limit °C, polling
// every poll, for at most timeout. It returns the hottest reading and
// whether the limit was reached; a host without thermal zones is an
// error (the wait cannot work there).
func (h *Host) WaitCool(limit float64, timeout, poll time.Duration) (float64, bool, error) {
	if limit < 0 {
		return 0, false, fmt.Errorf("cool-down target %g °C: a negative temperature", limit)
	}
	deadline := time.Now().Add(timeout)
	for {
		temps, err := h.Temperatures()
		if len(temps) == 0 {
			if err == nil {
				err = errors.New("no thermal zones")
			}
			return 0, false, fmt.Errorf("cool-down: cannot read temperatures: %w", err)
		}
		hot := 0.0
		for _, t := range temps {
			hot = math.Max(hot, t)
		}
		if hot <= limit {
			return hot, true, nil
		}
		if !time.Now().Before(deadline) {
			return hot, false, nil
		}
		h.Sleep(poll)
	}
}

// WaitIdle waits until the 1-minute load average is below limit, for at
// most timeout; it returns the last load and whether it fell below.
func (h *Host) WaitIdle(limit float64, timeout, poll time.Duration) (float64, bool, error) {
	pfs, err := procfs.NewFS(h.ProcRoot)
	if err != nil {
		return 0, false, err
	}
	deadline := time.Now().Add(timeout)
	for {
		la, err := pfs.LoadAvg()
		if err != nil {
			return 0, false, fmt.Errorf("idle wait: %w", err)
		}
		if la.Load1 < limit {
			return la.Load1, true, nil
		}
		if !time.Now().Before(deadline) {
			return la.Load1, false, nil
		}
		h.Sleep(poll)
	}
}

// Sample is the host telemetry around one iteration.
type Sample struct {
	TempC    float64 // hottest thermal zone, 0 without zones
	stealCPU float64
	totalCPU float64
}

// TakeSample reads the thermal zones and the CPU time counters.
func (h *Host) TakeSample() Sample {
	var s Sample
	if temps, _ := h.Temperatures(); len(temps) > 0 {
		for _, t := range temps {
			s.TempC = math.Max(s.TempC, t)
		}
	}
	if pfs, err := procfs.NewFS(h.ProcRoot); err == nil {
		if st, err := pfs.Stat(); err == nil {
			s.stealCPU, s.totalCPU = st.CPUTotal.Steal, cpuTotal(st.CPUTotal)
		}
	}
	return s
}

// StealPct is the steal time between two samples, in percent of CPU time.
func StealPct(before, after Sample) float64 {
	total := after.totalCPU - before.totalCPU
	if total <= 0 {
		return 0
	}
	return 100 * (after.stealCPU - before.stealCPU) / total
}

// Lock takes the run lock at path: an exclusive flock held until the
// returned release runs. When another process holds it, the error names
// that process's pid (written into the file).
func Lock(path string) (release func() error, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		holder := strings.TrimSpace(string(b))
		if holder == "" {
			holder = "unknown"
		}
		return nil, fmt.Errorf("%w %s (pid %s)", ErrLocked, path, holder)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() error {
		_ = f.Truncate(0)
		return errors.Join(unix.Flock(int(f.Fd()), unix.LOCK_UN), f.Close())
	}, nil
}

// ErrLocked is Lock's error when another process holds the lock.
var ErrLocked = errors.New("another run holds the lock")

// LockWait is Lock, retried while another process holds the lock, for up
// to wait (0: once) or until ctx is done.
func LockWait(ctx context.Context, path string, wait time.Duration) (release func() error, err error) {
	deadline := time.Now().Add(wait)
	for {
		release, err = Lock(path)
		if !errors.Is(err, ErrLocked) || !time.Now().Before(deadline) {
			return release, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (stopped waiting: %v)", err, ctx.Err())
		case <-time.After(min(200*time.Millisecond, time.Until(deadline))):
		}
	}
}

// DefaultLockPath is where benchctl's run lock lives.
func DefaultLockPath() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "benchctl.lock")
	}
	return filepath.Join(os.TempDir(), "benchctl.lock")
}
