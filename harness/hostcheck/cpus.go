package hostcheck

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseCPUList parses a kernel CPU list ("0-3,8,10-11") into sorted,
// distinct CPU numbers.
func ParseCPUList(s string) ([]int, error) {
	var out []int
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty CPU list")
	}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU list %q: %q is not a CPU number", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad CPU list %q: bad range %q", s, part)
			}
		}
		if b-a > 1<<16 {
			return nil, fmt.Errorf("bad CPU list %q: range %q is too large", s, part)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// FormatCPUList is the inverse of ParseCPUList ("0-3,8").
func FormatCPUList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// OnlineCPUs returns the online CPUs of the host.
func (h *Host) OnlineCPUs() ([]int, error) {
	s, err := h.read("sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("read the online CPUs: %w", err)
	}
	return ParseCPUList(s)
}

// CheckCPUs parses a --cpus value and checks every CPU exists and is
// online.
func (h *Host) CheckCPUs(list string) ([]int, error) {
	cpus, err := ParseCPUList(list)
	if err != nil {
		return nil, err
	}
	online, err := h.OnlineCPUs()
	if err != nil {
		return nil, err
	}
	for _, c := range cpus {
		if !slices.Contains(online, c) {
			return nil, fmt.Errorf("CPU list %s: CPU %d does not exist or is offline (online: %s)", list, c, FormatCPUList(online))
		}
	}
	return cpus, nil
}
