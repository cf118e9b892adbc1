package hostcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Write is one knob Tune sets.
type Write struct {
	Path string `json:"path"` // relative to the host root, e.g. sys/devices/…
	Old  string `json:"old"`
	New  string `json:"new"`
	Why  string `json:"why"`
}

// TuneState is what Tune saved for Reset: the previous value of every knob
// it changed.
type TuneState struct {
	Writes []Write `json:"writes"`
}

// DefaultStatePath is where tune saves the state that reset restores.
const DefaultStatePath = "/var/lib/benchctl/tune-state.json"

// TunePlan lists the knobs that pin the clock: the performance governor on
// every online CPU, scaling_min_freq = scaling_max_freq, and turbo or boost
// off. Knobs this host does not have are returned as skipped, with why.
func (h *Host) TunePlan() (writes []Write, skipped []string) {
	cpus, err := h.OnlineCPUs()
	if err != nil {
		return nil, []string{"CPUs: " + err.Error()}
	}
	set := func(p, value, why string) {
		old, err := h.read(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			skipped = append(skipped, fmt.Sprintf("%s: no such knob on this host", p))
		case err != nil:
			skipped = append(skipped, fmt.Sprintf("%s: cannot read: %v", p, err))
		case old != value:
			writes = append(writes, Write{Path: p, Old: old, New: value, Why: why})
		}
	}
	for _, c := range cpus {
		dir := fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq", c)
		if !h.exists(dir) {
			skipped = append(skipped, fmt.Sprintf("cpu%d: cpufreq is not exposed (a virtual machine?): the governor and frequency cannot be set", c))
			continue
		}
		set(dir+"/scaling_governor", "performance", "the clock must not follow the load")
		if maxFreq, err := h.read(dir + "/scaling_max_freq"); err == nil {
			set(dir+"/scaling_min_freq", maxFreq, "min = max: one frequency")
		}
	}
	if h.exists("sys/devices/system/cpu/intel_pstate/no_turbo") {
		set("sys/devices/system/cpu/intel_pstate/no_turbo", "1", "turbo depends on temperature and load")
	} else if h.exists("sys/devices/system/cpu/cpufreq/boost") {
		set("sys/devices/system/cpu/cpufreq/boost", "0", "boost depends on temperature and load")
	} else {
		skipped = append(skipped, "turbo: neither intel_pstate/no_turbo nor cpufreq/boost exists")
	}
	return writes, skipped
}

// Tune applies TunePlan under h.Root, after saving the previous values to
// statePath (written before any knob changes). Without root it changes
// nothing and says so. A failed write rolls back the writes before it.
func (h *Host) Tune(statePath string) (applied []Write, skipped []string, err error) {
	writes, skipped := h.TunePlan()
	if len(writes) == 0 {
		return nil, skipped, nil
	}
	if h.IsRoot != nil && !h.IsRoot() {
		for _, w := range writes {
			skipped = append(skipped, fmt.Sprintf("%s: needs root (would set %q)", w.Path, w.New))
		}
		return nil, skipped, nil
	}
	if _, err := os.Stat(statePath); err == nil {
		return nil, skipped, fmt.Errorf("%s exists: the host is already tuned; run `benchctl reset` first", statePath)
	}
	b, _ := json.MarshalIndent(TuneState{Writes: writes}, "", "  ")
	if err := os.MkdirAll(filepath.Dir(statePath), 0o755); err != nil {
		return nil, skipped, err
	}
	if err := os.WriteFile(statePath, b, 0o644); err != nil {
		return nil, skipped, fmt.Errorf("save the tune state: %w", err)
	}
	for _, w := range writes {
		if err := h.write(w.Path, w.New); err != nil {
			for i := len(applied) - 1; i >= 0; i-- {
				_ = h.write(applied[i].Path, applied[i].Old)
			}
			os.Remove(statePath)
			return nil, skipped, fmt.Errorf("set %s to %q: %w (earlier changes rolled back)", w.Path, w.New, err)
		}
		applied = append(applied, w)
	}
	return applied, skipped, nil
}

// Reset restores every knob saved by Tune and removes the state file.
func (h *Host) Reset(statePath string) ([]Write, error) {
	b, err := os.ReadFile(statePath)
	if err != nil {
		return nil, fmt.Errorf("no tune state to restore: %w", err)
	}
	st, err := decodeState(b)
	if err != nil {
		return nil, fmt.Errorf("%s: not a tune state, left as it is: %w", statePath, err)
	}
	// Every write is checked before any is made: a state file that names
	// anything but a known knob restores nothing.
	for _, w := range st.Writes {
		if err := h.checkWrite(w.Path, w.Old); err != nil {
			return nil, fmt.Errorf("%s: %w", statePath, err)
		}
	}
	var errs []error
	var restored []Write
	for i := len(st.Writes) - 1; i >= 0; i-- {
		w := st.Writes[i]
		if err := h.write(w.Path, w.Old); err != nil {
			errs = append(errs, fmt.Errorf("restore %s to %q: %w", w.Path, w.Old, err))
			continue
		}
		restored = append(restored, w)
	}
	if len(errs) > 0 {
		return restored, errors.Join(errs...)
	}
	return restored, os.Remove(statePath)
}

// decodeState reads what Tune wrote: an object of one key, "writes", an
// array of at least one write (Tune saves no state when it writes
// nothing). Anything else is not a tune state: Reset, run as root on a
// path the user names, must not remove it.
func decodeState(b []byte) (TuneState, error) {
	var st TuneState
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&st); err != nil {
		return st, err
	}
	if d.More() {
		return st, errors.New("more than one JSON value")
	}
	if len(st.Writes) == 0 {
		return st, errors.New("no writes")
	}
	return st, nil
}

// knobRE matches the only files tune and reset ever write, relative to the
// host root: the cpufreq governor and frequency limits of a CPU, turbo and
// boost, and SMT.
var knobRE = regexp.MustCompile(`^sys/devices/system/cpu/(cpu[0-9]+/cpufreq/(scaling_governor|scaling_min_freq|scaling_max_freq)|intel_pstate/no_turbo|cpufreq/boost|smt/control)$`)

// valueRE matches the values those knobs take (a governor name, a
// frequency in kHz, 0 or 1, on/off/forceoff).
var valueRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// checkWrite refuses a write anywhere but a known knob, or of a value no
// knob takes. The path is checked as given (a relative, clean path, so
// nothing of it is resolved away) and must name a regular file under the
// root.
func (h *Host) checkWrite(p, value string) error {
	if p != path.Clean(p) || !knobRE.MatchString(p) {
		return fmt.Errorf("%q is not a knob benchctl sets (cpufreq governor and limits, intel_pstate/no_turbo, cpufreq/boost, smt/control): refusing to write it", p)
	}
	if !valueRE.MatchString(strings.TrimSpace(value)) {
		return fmt.Errorf("%s: value %q is not one a CPU knob takes: refusing to write it", p, value)
	}
	full := filepath.Join(h.Root, filepath.FromSlash(p))
	if fi, err := os.Lstat(full); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s): refusing to write it", full, fi.Mode().Type())
	}
	return nil
}

func (h *Host) write(p, value string) error {
	if h.Root == "" {
		return errors.New("host has no writable root")
	}
	if err := h.checkWrite(p, value); err != nil {
		return err
	}
	full := filepath.Join(h.Root, filepath.FromSlash(p))
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strings.TrimSpace(value) + "\n")
	return errors.Join(err, f.Close())
}
