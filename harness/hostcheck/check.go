package hostcheck

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// Facts are what the checks read, for the results header and the
// fingerprints.
type Facts struct {
	Brand          string   `json:"brand"`
	Vendor         string   `json:"vendor"`
	Family         int      `json:"family"`
	Model          int      `json:"model"`
	Stepping       int      `json:"stepping"`
	PhysicalCores  int      `json:"physicalCores"`
	LogicalCores   int      `json:"logicalCores"`
	ThreadsPerCore int      `json:"threadsPerCore"`
	Sockets        int      `json:"sockets"`
	CacheL1D       int      `json:"cacheL1D"`
	CacheL1I       int      `json:"cacheL1I"`
	CacheL2        int      `json:"cacheL2"`
	CacheL3        int      `json:"cacheL3"`
	BaseMHz        int64    `json:"baseMHz,omitempty"`
	BoostMHz       int64    `json:"boostMHz,omitempty"`
	Hypervisor     bool     `json:"hypervisor"`
	Features       []string `json:"features,omitempty"`
	MemGiB         int      `json:"memGiB"`
	Arch           string   `json:"arch"`
	Kernel         string   `json:"kernel"`
	Microcode      string   `json:"microcode,omitempty"`
	Driver         string   `json:"cpufreqDriver"`
	Governor       string   `json:"governor"`
	Turbo          string   `json:"turbo"`
	SMT            string   `json:"smt"`
	THP            string   `json:"thp"`
	ASLR           string   `json:"aslr"`
	ProbeMHz       float64  `json:"probeMHz,omitempty"`
	ProbeSpread    float64  `json:"probeSpread,omitempty"`
	MaxTempC       float64  `json:"maxTempC,omitempty"`
	GoVersion      string   `json:"go"`
	// Build is BuildFlags of the process that checked (empty for a plain
	// build): instrumented or differently compiled code is another
	// environment.
	Build   string `json:"build,omitempty"`
	Version string `json:"benchctlVersion"`
}

// Check inspects the host and returns its findings and verdict.
func Check(h *Host) *Report {
	r := &Report{}
	f := &r.Facts
	h.identity(r)
	h.cpufreq(r)
	h.kernelKnobs(r)
	h.load(r)
	h.thermal(r)
	h.power(r)
	h.probe(r)
	f.GoVersion, f.Version, f.Arch, f.Build = h.GoVersion, h.Version, h.Arch, h.Build
	r.MachineID, r.EnvID = fingerprints(f)
	r.finish()
	return r
}

func (h *Host) identity(r *Report) {
	c, f := h.CPU, &r.Facts
	f.Brand, f.Vendor = strings.TrimSpace(c.BrandName), c.VendorString
	f.Family, f.Model, f.Stepping = c.Family, c.Model, c.Stepping
	f.PhysicalCores, f.LogicalCores, f.ThreadsPerCore = c.PhysicalCores, c.LogicalCores, c.ThreadsPerCore
	f.CacheL1D, f.CacheL1I, f.CacheL2, f.CacheL3 = c.Cache.L1D, c.Cache.L1I, c.Cache.L2, c.Cache.L3
	f.BaseMHz, f.BoostMHz = c.Hz/1_000_000, c.BoostFreq/1_000_000
	f.Hypervisor = c.Supports(cpuidHypervisor)
	for _, feat := range []string{"AVX2", "AVX512F", "BMI2", "ADX", "SHA", "AESNI"} {
		if c.Has(featureID(feat)) {
			f.Features = append(f.Features, feat)
		}
	}
	f.Kernel = h.Kernel
	if pfs, err := procfs.NewFS(h.ProcRoot); err == nil {
		if infos, err := pfs.CPUInfo(); err == nil && len(infos) > 0 {
			f.Microcode = infos[0].Microcode
			sockets := map[string]bool{}
			for _, in := range infos {
				sockets[in.PhysicalID] = true
			}
			f.Sockets = len(sockets)
		}
		if mi, err := pfs.Meminfo(); err == nil && mi.MemTotal != nil {
			f.MemGiB = int(math.Round(float64(*mi.MemTotal) / (1 << 20))) // kB → GiB
		}
	}
	hz := "base and boost frequency unknown"
	if f.BaseMHz > 0 {
		hz = fmt.Sprintf("base %d MHz, boost %d MHz", f.BaseMHz, f.BoostMHz)
	}
	msg := fmt.Sprintf("%s (%s family %d model %d stepping %d), %d cores / %d threads, L2 %d KiB L3 %d KiB, %s",
		orUnknown(f.Brand), orUnknown(f.Vendor), f.Family, f.Model, f.Stepping, f.PhysicalCores, f.LogicalCores, f.CacheL2>>10, f.CacheL3>>10, hz)
	r.add("cpu", OK, -1, msg, "")
	if f.Hypervisor {
		r.add("hypervisor", Warn, -1, "running under a hypervisor: steal time and host frequency changes are invisible to the guest",
			"benchmark on bare metal for results you compare across runs")
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// cpufreq checks every online CPU's frequency scaling.
func (h *Host) cpufreq(r *Report) {
	f := &r.Facts
	f.Driver, f.Governor, f.Turbo = "none", "none", "unknown"
	cpus, err := h.OnlineCPUs()
	if err != nil {
		r.add("cpus", Warn, -1, "cannot read the online CPUs: "+err.Error(), "check /sys/devices/system/cpu/online")
	}
	governors := map[string]bool{}
	var exposed int
	var curs []float64
	for _, c := range cpus {
		dir := fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq", c)
		if !h.exists(dir) {
			continue
		}
		exposed++
		driver, _ := h.read(dir + "/scaling_driver")
		f.Driver = orUnknown(driver)
		gov, err := h.read(dir + "/scaling_governor")
		if err != nil {
			r.add("governor", Fail, c, fmt.Sprintf("cannot read the governor of cpu%d: %v", c, err), "run benchctl check as root")
			continue
		}
		governors[gov] = true
		if gov != "performance" {
			r.add("governor", Fail, c, fmt.Sprintf("governor is %s on cpu%d: the clock follows the load", gov, c),
				fmt.Sprintf("run `benchctl tune` or write performance to /%s/scaling_governor", dir))
		}
		lo, errLo := h.readInt(dir + "/scaling_min_freq")
		hi, errHi := h.readInt(dir + "/scaling_max_freq")
		switch {
		case errLo != nil || errHi != nil:
			r.add("freq-range", Fail, c, fmt.Sprintf("cannot read the frequency range of cpu%d: %v", c, errors.Join(errLo, errHi)), "run benchctl check as root")
		case lo != hi:
			r.add("freq-range", Fail, c, fmt.Sprintf("cpu%d may run between %d and %d MHz (scaling_min_freq != scaling_max_freq)", c, lo/1000, hi/1000),
				"run `benchctl tune` (sets scaling_min_freq = scaling_max_freq)")
		}
		if cur, err := h.readInt(dir + "/scaling_cur_freq"); err == nil {
			curs = append(curs, float64(cur))
		}
	}
	if exposed == 0 {
		r.add("cpufreq", Fail, -1, "cpufreq is not exposed: the CPU frequency can be neither controlled nor observed (a virtual machine?); the frequency probe is the only evidence",
			"benchmark on a host whose cpufreq you control, or compare only ratios measured side by side in one run")
	} else {
		r.add("cpufreq", OK, -1, fmt.Sprintf("cpufreq driver %s on %d of %d CPUs", f.Driver, exposed, len(cpus)), "")
		if exposed < len(cpus) {
			r.add("cpufreq", Fail, -1, fmt.Sprintf("cpufreq is exposed on %d of %d CPUs only", exposed, len(cpus)), "check the cpufreq driver")
		}
	}
	if len(governors) > 0 {
		gs := slices.Sorted(maps.Keys(governors))
		f.Governor = strings.Join(gs, "+")
		if len(gs) > 1 {
			r.add("governor", Fail, -1, "mixed governors across CPUs: "+f.Governor, "run `benchctl tune`")
		}
	}
	if len(curs) > 1 {
		lo, hi := minMax(curs)
		if hi > lo*1.02 {
			r.add("cur-freq", Warn, -1, fmt.Sprintf("current frequencies differ across CPUs: %.0f–%.0f MHz", lo/1000, hi/1000), "pin the frequency with `benchctl tune`")
		}
	}
	// Turbo: intel_pstate's no_turbo, or the ACPI/AMD boost switch.
	if v, err := h.read("sys/devices/system/cpu/intel_pstate/no_turbo"); err == nil {
		if v == "1" {
			f.Turbo = "off"
			r.add("turbo", OK, -1, "intel_pstate turbo is off", "")
		} else {
			f.Turbo = "on"
			r.add("turbo", Fail, -1, "intel_pstate turbo is on: the clock depends on temperature and load", "run `benchctl tune` or write 1 to /sys/devices/system/cpu/intel_pstate/no_turbo")
		}
		if pct, err := h.readInt("sys/devices/system/cpu/intel_pstate/min_perf_pct"); err == nil && pct != 100 {
			r.add("min-perf", Warn, -1, fmt.Sprintf("intel_pstate min_perf_pct is %d: the P-state may drop below the maximum", pct), "write 100 to /sys/devices/system/cpu/intel_pstate/min_perf_pct")
		}
	} else if v, err := h.read("sys/devices/system/cpu/cpufreq/boost"); err == nil {
		if v == "0" {
			f.Turbo = "off"
			r.add("turbo", OK, -1, "cpufreq boost is off", "")
		} else {
			f.Turbo = "on"
			r.add("turbo", Fail, -1, "cpufreq boost is on: the clock depends on temperature and load", "run `benchctl tune` or write 0 to /sys/devices/system/cpu/cpufreq/boost")
		}
	} else if exposed > 0 {
		r.add("turbo", Warn, -1, "neither intel_pstate/no_turbo nor cpufreq/boost exists: turbo state unknown", "check the BIOS setting")
	}
}

func (h *Host) readInt(p string) (int64, error) {
	s, err := h.read(p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

func minMax(xs []float64) (float64, float64) {
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// kernelKnobs checks SMT, CPU isolation, ASLR, perf_event_paranoid and THP.
func (h *Host) kernelKnobs(r *Report) {
	f := &r.Facts
	f.SMT, f.THP, f.ASLR = "unknown", "unknown", "unknown"
	if v, err := h.read("sys/devices/system/cpu/smt/active"); err == nil {
		if v == "1" {
			f.SMT = "on"
			r.add("smt", Warn, -1, "SMT is active: sibling hardware threads share a core's units", "echo off > /sys/devices/system/cpu/smt/control, or pin the forks to one thread per core")
		} else {
			f.SMT = "off"
			r.add("smt", OK, -1, "SMT is off", "")
		}
	}
	if pfs, err := procfs.NewFS(h.ProcRoot); err == nil {
		if args, err := pfs.CmdLine(); err == nil {
			var iso []string
			for _, a := range args {
				for _, k := range []string{"isolcpus=", "nohz_full=", "rcu_nocbs="} {
					if strings.HasPrefix(a, k) {
						iso = append(iso, a)
					}
				}
			}
			if len(iso) == 0 {
				r.add("isolation", Warn, -1, "no isolcpus, nohz_full or rcu_nocbs on the kernel command line: benchmarks share CPUs with everything else", "boot with isolcpus=, nohz_full= and rcu_nocbs= for the benchmark CPUs and pin the forks to them")
			} else {
				r.add("isolation", OK, -1, "CPU isolation: "+strings.Join(iso, " "), "")
			}
		} else {
			r.add("isolation", Warn, -1, "cannot read the kernel command line: "+err.Error(), "")
		}
	}
	if v, err := h.read("proc/sys/kernel/randomize_va_space"); err == nil {
		f.ASLR = v
		if v != "0" {
			r.add("aslr", Warn, -1, "ASLR is on (randomize_va_space="+v+"): code and data addresses differ between forks", "forks average it out; for A/B of layout-sensitive code: sysctl kernel.randomize_va_space=0")
		}
	}
	if v, err := h.readInt("proc/sys/kernel/perf_event_paranoid"); err == nil && v > 2 {
		r.add("perf-paranoid", Warn, -1, fmt.Sprintf("perf_event_paranoid is %d: perf cannot count for unprivileged users", v), "sysctl kernel.perf_event_paranoid=1")
	}
	if v, err := h.read("sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		f.THP = bracketed(v)
		if f.THP == "always" {
			r.add("thp", Warn, -1, "transparent huge pages are always on: khugepaged may stall and move memory during runs", "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled")
		}
	}
}

// bracketed returns the [selected] word of a sysfs choice list.
func bracketed(s string) string {
	if i := strings.Index(s, "["); i >= 0 {
		if j := strings.Index(s[i:], "]"); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

// load checks the load average, runnable threads and steal time.
func (h *Host) load(r *Report) {
	pfs, err := procfs.NewFS(h.ProcRoot)
	if err != nil {
		r.add("load", Warn, -1, "cannot open procfs: "+err.Error(), "")
		return
	}
	ncpu := max(r.Facts.LogicalCores, 1)
	if la, err := pfs.LoadAvg(); err != nil {
		r.add("load", Warn, -1, "cannot read the load average: "+err.Error(), "")
	} else if la.Load1 > 0.1*float64(ncpu)+0.2 {
		r.add("load", Warn, -1, fmt.Sprintf("load average %.2f on %d CPUs: something else is running", la.Load1, ncpu), "stop other work, or wait for it to end before each fork")
	} else {
		r.add("load", OK, -1, fmt.Sprintf("load average %.2f", la.Load1), "")
	}
	s0, err := pfs.Stat()
	if err != nil {
		r.add("steal", Warn, -1, "cannot read /proc/stat: "+err.Error(), "")
		return
	}
	if s0.ProcessesRunning > 2 {
		r.add("runnable", Warn, -1, fmt.Sprintf("%d runnable threads", s0.ProcessesRunning), "stop other work")
	}
	if h.StealWindow <= 0 || h.Sleep == nil {
		return
	}
	h.Sleep(h.StealWindow)
	s1, err := pfs.Stat()
	if err != nil {
		return
	}
	total := cpuTotal(s1.CPUTotal) - cpuTotal(s0.CPUTotal)
	steal := s1.CPUTotal.Steal - s0.CPUTotal.Steal
	if total <= 0 {
		return
	}
	pct := 100 * steal / total
	if pct > 1 {
		r.add("steal", Warn, -1, fmt.Sprintf("CPU steal %.1f %% over %s: the hypervisor runs other guests on these CPUs", pct, h.StealWindow), "use dedicated hosts")
	} else {
		r.add("steal", OK, -1, fmt.Sprintf("CPU steal %.1f %% over %s", pct, h.StealWindow), "")
	}
}

func cpuTotal(c procfs.CPUStat) float64 {
	return c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
}

// Temperatures returns every thermal zone's temperature in °C.
func (h *Host) Temperatures() (map[string]float64, error) {
	zones, err := fs.Glob(h.FS, "sys/class/thermal/thermal_zone*/temp")
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	var errs []error
	for _, z := range zones {
		v, err := h.readInt(z)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", z, err))
			continue
		}
		out[path.Base(path.Dir(z))] = float64(v) / 1000
	}
	return out, errors.Join(errs...)
}

func (h *Host) thermal(r *Report) {
	temps, err := h.Temperatures()
	if err != nil {
		r.add("thermal", Warn, -1, "cannot read a thermal zone: "+err.Error(), "")
	}
	if len(temps) == 0 {
		r.add("thermal", Warn, -1, "no thermal zones: temperature and throttling cannot be observed", "a wait for a cool package cannot work here")
		return
	}
	hot := 0.0
	for _, t := range temps {
		hot = math.Max(hot, t)
	}
	r.Facts.MaxTempC = hot
	sev := OK
	if hot > 80 {
		sev = Warn
	}
	r.add("thermal", sev, -1, fmt.Sprintf("hottest of %d thermal zones at %.1f °C", len(temps), hot), "wait for a cool package before each fork")
}

func (h *Host) power(r *Report) {
	supplies, _ := fs.Glob(h.FS, "sys/class/power_supply/*/type")
	for _, t := range supplies {
		typ, err := h.read(t)
		if err != nil || typ != "Mains" {
			continue
		}
		online, err := h.read(path.Join(path.Dir(t), "online"))
		if err != nil {
			r.add("power", Warn, -1, "cannot read "+path.Dir(t)+"/online", "")
		} else if online != "1" {
			r.add("power", Fail, -1, "on battery: laptops throttle without mains power", "plug in the power supply")
		} else {
			r.add("power", OK, -1, "on mains power", "")
		}
	}
}

// probe measures the effective frequency a few times.
func (h *Host) probe(r *Report) {
	if h.Probe == nil || h.ProbeSamples <= 0 {
		return
	}
	var xs []float64
	for i := 0; i < h.ProbeSamples; i++ {
		xs = append(xs, h.Probe())
	}
	lo, hi := minMax(xs)
	sort.Float64s(xs)
	med := xs[len(xs)/2]
	r.Facts.ProbeMHz, r.Facts.ProbeSpread = med, (hi-lo)/med
	msg := fmt.Sprintf("frequency probe: %.0f MHz effective (median of %d, spread %.1f %%)", med, len(xs), 100*r.Facts.ProbeSpread)
	sev := OK
	if r.Facts.ProbeSpread > 0.05 {
		sev = Warn
		msg += ": the clock or the CPU's availability moved between samples"
	}
	if r.Facts.Driver == "none" {
		msg += "; without cpufreq this is the only evidence of the clock"
	}
	r.add("probe", sev, -1, msg, "")
}
