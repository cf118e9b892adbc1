// Package hostchecktest holds host fixtures for tests: file systems of a
// pinned Intel server, an AMD desktop with boost on, a laptop on battery
// with powersave, a virtual machine without cpufreq or thermal zones, and
// a host with mixed governors.
package hostchecktest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/klauspost/cpuid/v2"

	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
)

// procFiles are the procfs files every fixture needs.
func procFiles(load string, cmdline string) fstest.MapFS {
	return fstest.MapFS{
		"proc/loadavg":                               {Data: []byte(load + " 0.05 0.01 1/120 4242\n")},
		"proc/stat":                                  {Data: []byte("cpu  100 0 50 10000 0 0 0 0 0 0\ncpu0 50 0 25 5000 0 0 0 0 0 0\nprocs_running 1\nprocs_blocked 0\n")},
		"proc/cmdline":                               {Data: []byte(cmdline + "\n")},
		"proc/cpuinfo":                               {Data: []byte("processor\t: 0\nvendor_id\t: GenuineIntel\nphysical id\t: 0\nmicrocode\t: 0x2006e05\n\n")},
		"proc/meminfo":                               {Data: []byte("MemTotal:       32768000 kB\n")},
		"proc/sys/kernel/randomize_va_space":         {Data: []byte("2\n")},
		"proc/sys/kernel/perf_event_paranoid":        {Data: []byte("2\n")},
		"sys/kernel/mm/transparent_hugepage/enabled": {Data: []byte("always [madvise] never\n")},
	}
}

func cpufreqFiles(m fstest.MapFS, cpu int, driver, gov string, lo, hi, cur int) {
	dir := fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq/", cpu)
	m[dir+"scaling_driver"] = &fstest.MapFile{Data: []byte(driver + "\n")}
	m[dir+"scaling_governor"] = &fstest.MapFile{Data: []byte(gov + "\n")}
	m[dir+"scaling_min_freq"] = &fstest.MapFile{Data: []byte(fmt.Sprint(lo) + "\n")}
	m[dir+"scaling_max_freq"] = &fstest.MapFile{Data: []byte(fmt.Sprint(hi) + "\n")}
	m[dir+"scaling_cur_freq"] = &fstest.MapFile{Data: []byte(fmt.Sprint(cur) + "\n")}
}

func set(m fstest.MapFS, path, content string) {
	m[path] = &fstest.MapFile{Data: []byte(content + "\n")}
}

// Fixtures are the hosts of the tests, by name.
func Fixtures() map[string]fstest.MapFS {
	out := map[string]fstest.MapFS{}

	pinned := procFiles("0.01", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3")
	set(pinned, "sys/devices/system/cpu/online", "0-3")
	for c := 0; c < 4; c++ {
		cpufreqFiles(pinned, c, "intel_pstate", "performance", 2400000, 2400000, 2400000)
	}
	set(pinned, "sys/devices/system/cpu/intel_pstate/no_turbo", "1")
	set(pinned, "sys/devices/system/cpu/intel_pstate/min_perf_pct", "100")
	set(pinned, "sys/devices/system/cpu/smt/active", "0")
	set(pinned, "proc/sys/kernel/randomize_va_space", "0")
	set(pinned, "sys/class/thermal/thermal_zone0/temp", "45000")
	out["intel-server-pinned"] = pinned

	amd := procFiles("0.02", "BOOT_IMAGE=/vmlinuz quiet")
	set(amd, "sys/devices/system/cpu/online", "0-1")
	for c := 0; c < 2; c++ {
		cpufreqFiles(amd, c, "acpi-cpufreq", "performance", 2200000, 3700000, 3700000)
	}
	set(amd, "sys/devices/system/cpu/cpufreq/boost", "1")
	set(amd, "sys/devices/system/cpu/smt/active", "1")
	set(amd, "sys/class/thermal/thermal_zone0/temp", "61500")
	out["amd-desktop-boost"] = amd

	laptop := procFiles("0.80", "BOOT_IMAGE=/vmlinuz quiet splash")
	set(laptop, "sys/devices/system/cpu/online", "0-1")
	cpufreqFiles(laptop, 0, "intel_pstate", "powersave", 400000, 4200000, 1300000)
	cpufreqFiles(laptop, 1, "intel_pstate", "powersave", 400000, 4200000, 3900000)
	set(laptop, "sys/devices/system/cpu/intel_pstate/no_turbo", "0")
	set(laptop, "sys/devices/system/cpu/intel_pstate/min_perf_pct", "9")
	set(laptop, "sys/class/power_supply/AC/type", "Mains")
	set(laptop, "sys/class/power_supply/AC/online", "0")
	set(laptop, "sys/class/thermal/thermal_zone0/temp", "83000")
	set(laptop, "sys/class/thermal/thermal_zone1/temp", "52000")
	out["laptop-battery-powersave"] = laptop

	vm := procFiles("0.00", "console=ttyS0 reboot=k panic=1")
	set(vm, "sys/devices/system/cpu/online", "0-1")
	out["vm-no-cpufreq"] = vm

	mixed := procFiles("0.01", "BOOT_IMAGE=/vmlinuz")
	set(mixed, "sys/devices/system/cpu/online", "0-1")
	cpufreqFiles(mixed, 0, "intel_cpufreq", "performance", 3000000, 3000000, 3000000)
	cpufreqFiles(mixed, 1, "intel_cpufreq", "schedutil", 3000000, 3000000, 3000000)
	set(mixed, "sys/devices/system/cpu/intel_pstate/no_turbo", "1")
	out["mixed-governors"] = mixed
	return out
}

// FixtureHost materializes a fixture in a temporary directory (procfs
// parses files by path; tune writes them) and returns a host reading it.
func FixtureHost(t testing.TB, m fstest.MapFS) *hostcheck.Host {
	dir := t.TempDir()
	for name, f := range m {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := cpuid.CPUInfo{BrandName: "Test CPU @ 2.40GHz", VendorString: "GenuineIntel", Family: 6, Model: 85, Stepping: 7,
		PhysicalCores: 2, LogicalCores: 2, ThreadsPerCore: 1}
	c.Cache.L1D, c.Cache.L1I, c.Cache.L2, c.Cache.L3 = 32<<10, 32<<10, 1<<20, 16<<20
	return &hostcheck.Host{
		FS: m, Root: dir, ProcRoot: filepath.Join(dir, "proc"), IsRoot: func() bool { return true },
		CPU: c, Kernel: "6.1.0-test", Probe: func() float64 { return 2400 }, ProbeSamples: 3,
		GoVersion: "go1.26.8", Version: "0.1.0", Arch: "amd64",
	}
}
