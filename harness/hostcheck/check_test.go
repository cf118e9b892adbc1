package hostcheck_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck/hostchecktest"
)

func findings(r *hostcheck.Report, sev hostcheck.Severity) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Severity == sev {
			out = append(out, f.ID)
		}
	}
	return out
}

func TestFixtureVerdicts(t *testing.T) {
	fx := hostchecktest.Fixtures()
	for _, tc := range []struct {
		name   string
		pinned bool
		fails  []string // finding IDs that must fail
		reason string
	}{
		{"intel-server-pinned", true, nil, ""},
		{"amd-desktop-boost", false, []string{"freq-range", "turbo"}, "cpufreq boost is on"},
		{"laptop-battery-powersave", false, []string{"governor", "freq-range", "turbo", "power"}, "on battery"},
		{"vm-no-cpufreq", false, []string{"cpufreq"}, "cpufreq is not exposed: the CPU frequency can be neither controlled nor observed"},
		{"mixed-governors", false, []string{"governor"}, "mixed governors across CPUs: performance+schedutil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := hostcheck.Check(hostchecktest.FixtureHost(t, fx[tc.name]))
			if r.Pinned != tc.pinned {
				t.Fatalf("verdict %s, want pinned=%v; reasons %v", r.Verdict(), tc.pinned, r.Reasons)
			}
			fails := findings(r, hostcheck.Fail)
			for _, id := range tc.fails {
				if !slices.Contains(fails, id) {
					t.Errorf("no failing %q finding; failing: %v", id, fails)
				}
			}
			if tc.pinned && len(fails) > 0 {
				t.Errorf("pinned host has failing findings %v", fails)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(r.Reasons, "\n"), tc.reason) {
				t.Errorf("reasons %q lack %q", r.Reasons, tc.reason)
			}
			for _, f := range r.Findings {
				if f.Severity != hostcheck.OK && f.Fix == "" && f.ID != "thermal" && f.ID != "load" && f.ID != "steal" {
					t.Errorf("finding %s (%s) has no fix", f.ID, f.Message)
				}
			}
		})
	}
}

func TestVMReportsProbeAsOnlyEvidence(t *testing.T) {
	r := hostcheck.Check(hostchecktest.FixtureHost(t, hostchecktest.Fixtures()["vm-no-cpufreq"]))
	var probe string
	for _, f := range r.Findings {
		if f.ID == "probe" {
			probe = f.Message
		}
	}
	if !strings.Contains(probe, "2400 MHz") || !strings.Contains(probe, "only evidence") {
		t.Errorf("probe finding %q: want the measured frequency and that it is the only evidence", probe)
	}
}

func TestFingerprints(t *testing.T) {
	fx := hostchecktest.Fixtures()
	a := hostcheck.Check(hostchecktest.FixtureHost(t, fx["intel-server-pinned"]))
	b := hostcheck.Check(hostchecktest.FixtureHost(t, fx["intel-server-pinned"]))
	c := hostcheck.Check(hostchecktest.FixtureHost(t, fx["mixed-governors"]))
	if a.MachineID != b.MachineID || a.EnvID != b.EnvID {
		t.Errorf("the same host has two fingerprints: %s/%s vs %s/%s", a.MachineID, a.EnvID, b.MachineID, b.EnvID)
	}
	if a.MachineID != c.MachineID {
		t.Errorf("same hardware, different machine-id: %s vs %s", a.MachineID, c.MachineID)
	}
	if a.EnvID == c.EnvID {
		t.Errorf("different governors and ASLR, same env-id %s", a.EnvID)
	}
	h := hostchecktest.FixtureHost(t, fx["intel-server-pinned"])
	h.CPU.PhysicalCores = 64
	if hostcheck.Check(h).MachineID == a.MachineID {
		t.Error("different core counts, same machine-id")
	}
}

func TestUnreadableFileIsAFinding(t *testing.T) {
	m := hostchecktest.Fixtures()["intel-server-pinned"]
	delete(m, "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor")
	r := hostcheck.Check(hostchecktest.FixtureHost(t, m))
	if r.Pinned || !strings.Contains(strings.Join(r.Reasons, "\n"), "cannot read the governor of cpu2") {
		t.Errorf("a missing governor file: verdict %s, reasons %v", r.Verdict(), r.Reasons)
	}
}

func TestCPUList(t *testing.T) {
	got, err := hostcheck.ParseCPUList("3,0-1, 1 ,8-9")
	if err != nil || hostcheck.FormatCPUList(got) != "0-1,3,8-9" {
		t.Errorf("ParseCPUList = %v, %v", got, err)
	}
	for _, bad := range []string{"", "a", "3-1", "-1", "1,,2", "0-99999999"} {
		if _, err := hostcheck.ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) accepted it", bad)
		}
	}
	h := hostchecktest.FixtureHost(t, hostchecktest.Fixtures()["vm-no-cpufreq"])
	if _, err := h.CheckCPUs("1-2"); err == nil || !strings.Contains(err.Error(), "CPU 2 does not exist or is offline (online: 0-1)") {
		t.Errorf("CheckCPUs(1-2) = %v", err)
	}
}

func TestWaitCool(t *testing.T) {
	fx := hostchecktest.Fixtures()
	laptop := hostchecktest.FixtureHost(t, fx["laptop-battery-powersave"])
	laptop.Sleep = func(time.Duration) {}
	if temp, ok, err := laptop.WaitCool(55, 0, 0); err != nil || ok || temp != 83 {
		t.Errorf("hot laptop: %v %v %v; want 83 °C, not cool", temp, ok, err)
	}
	server := hostchecktest.FixtureHost(t, fx["intel-server-pinned"])
	if temp, ok, err := server.WaitCool(55, time.Second, 0); err != nil || !ok || temp != 45 {
		t.Errorf("cool server: %v %v %v", temp, ok, err)
	}
	vm := hostchecktest.FixtureHost(t, fx["vm-no-cpufreq"])
	if _, _, err := vm.WaitCool(55, time.Second, 0); err == nil || !strings.Contains(err.Error(), "no thermal zones") {
		t.Errorf("VM cool-down: %v", err)
	}
	if _, _, err := server.WaitCool(-5, time.Second, 0); err == nil {
		t.Error("a negative temperature was accepted")
	}
	if load, ok, err := server.WaitIdle(0.3, 0, 0); err != nil || !ok || load != 0.01 {
		t.Errorf("WaitIdle: %v %v %v", load, ok, err)
	}
}

func TestTuneResetRoundTrip(t *testing.T) {
	m := hostchecktest.Fixtures()["laptop-battery-powersave"]
	h := hostchecktest.FixtureHost(t, m)
	snapshot := func() map[string]string {
		out := map[string]string{}
		filepath.Walk(filepath.Join(h.Root, "sys"), func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				b, _ := os.ReadFile(p)
				out[p] = string(b)
			}
			return nil
		})
		return out
	}
	before := snapshot()
	state := filepath.Join(t.TempDir(), "state.json")
	applied, _, err := h.Tune(state)
	if err != nil || len(applied) != 5 { // 2 governors, 2 min freqs, no_turbo
		t.Fatalf("Tune: %d writes, %v", len(applied), err)
	}
	read := func(p string) string {
		b, _ := os.ReadFile(filepath.Join(h.Root, p))
		return strings.TrimSpace(string(b))
	}
	if read("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor") != "performance" ||
		read("sys/devices/system/cpu/cpu0/cpufreq/scaling_min_freq") != "4200000" ||
		read("sys/devices/system/cpu/intel_pstate/no_turbo") != "1" {
		t.Fatal("tune did not set the knobs")
	}
	if _, _, err := h.Tune(state); err == nil {
		t.Error("tuning twice overwrote the saved state")
	}
	if _, err := h.Reset(state); err != nil {
		t.Fatal(err)
	}
	after := snapshot()
	for p, v := range before {
		if strings.TrimSpace(after[p]) != strings.TrimSpace(v) {
			t.Errorf("%s: %q after reset, %q before tune", p, after[p], v)
		}
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Error("reset left the state file")
	}
}

func TestTuneWithoutRootChangesNothing(t *testing.T) {
	h := hostchecktest.FixtureHost(t, hostchecktest.Fixtures()["laptop-battery-powersave"])
	h.IsRoot = func() bool { return false }
	state := filepath.Join(t.TempDir(), "state.json")
	applied, skipped, err := h.Tune(state)
	if err != nil || len(applied) != 0 || len(skipped) < 5 || !strings.Contains(strings.Join(skipped, "\n"), "needs root") {
		t.Fatalf("Tune without root: applied %v, skipped %v, %v", applied, skipped, err)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Error("a state file was written although nothing changed")
	}
	vm := hostchecktest.FixtureHost(t, hostchecktest.Fixtures()["vm-no-cpufreq"])
	applied, skipped, _ = vm.Tune(state)
	if len(applied) != 0 || !strings.Contains(strings.Join(skipped, "\n"), "cpufreq is not exposed") {
		t.Errorf("VM tune: applied %v, skipped %v", applied, skipped)
	}
}

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchctl.lock")
	release, err := hostcheck.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hostcheck.Lock(path); err == nil || !strings.Contains(err.Error(), "(pid "+strconv.Itoa(os.Getpid())+")") {
		t.Errorf("second lock: %v; want an error naming this pid", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	release, err = hostcheck.Lock(path)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	release()
}

// TestResetWritesOnlyKnownKnobs: a state file that names any file but a
// CPU knob, or a value no knob takes, is refused before anything is
// written; the file it names keeps its contents.
func TestResetWritesOnlyKnownKnobs(t *testing.T) {
	h := hostchecktest.FixtureHost(t, hostchecktest.Fixtures()["laptop-battery-powersave"])
	outside := filepath.Join(filepath.Dir(h.Root), "victim")
	os.WriteFile(outside, []byte("precious\n"), 0o644)
	rel, _ := filepath.Rel(h.Root, outside)
	governor := "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
	os.MkdirAll(filepath.Join(h.Root, "sys/devices/system/cpu/smt"), 0o755)
	os.Symlink(outside, filepath.Join(h.Root, "sys/devices/system/cpu/smt/control")) // a knob that leads elsewhere
	for _, tc := range []struct{ path, old, want string }{
		{rel, "again", "is not a knob"},
		{"../../../../" + rel, "again", "is not a knob"},
		{"sys/devices/system/cpu/../../../" + rel, "again", "is not a knob"},
		{"/etc/passwd", "x", "is not a knob"},
		{"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor/../../../../../../" + rel, "x", "is not a knob"},
		{governor, "powersave\nroot::0:0", "is not one a CPU knob takes"},
		{"sys/devices/system/cpu/smt/control", "on", "is not a regular file"},
	} {
		state := filepath.Join(t.TempDir(), "state.json")
		b, _ := json.Marshal(hostcheck.TuneState{Writes: []hostcheck.Write{{Path: governor, Old: "powersave"}, {Path: tc.path, Old: tc.old}}})
		os.WriteFile(state, b, 0o644)
		before, _ := os.ReadFile(filepath.Join(h.Root, governor))
		_, err := h.Reset(state)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Reset of %q: %v, want %q", tc.path, err, tc.want)
		}
		if got, _ := os.ReadFile(outside); string(got) != "precious\n" {
			t.Fatalf("Reset of %q wrote %q outside the knobs", tc.path, got)
		}
		if after, _ := os.ReadFile(filepath.Join(h.Root, governor)); string(after) != string(before) {
			t.Errorf("Reset of %q restored a knob before refusing", tc.path)
		}
		if _, err := os.Stat(state); err != nil {
			t.Errorf("a refused reset removed its state file: %v", err)
		}
	}
}

// FuzzCPUList: any text is a CPU list or an error; a list formats and
// parses back to itself.
func FuzzCPUList(f *testing.F) {
	for _, s := range []string{"0", "2,3", "0-3,8", "1-1", "3-1", "-", "", "0-999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := hostcheck.ParseCPUList(s)
		if err != nil {
			return
		}
		back, err := hostcheck.ParseCPUList(hostcheck.FormatCPUList(cpus))
		if err != nil || !slices.Equal(back, cpus) {
			t.Fatalf("%q → %v → %q → %v, %v", s, cpus, hostcheck.FormatCPUList(cpus), back, err)
		}
	})
}

// TestResetKeepsWhatIsNotATuneState: reset restores and removes only a
// file that tune wrote; any other JSON (reset runs as root, with a path
// the user gives) is refused and left where it is.
func TestResetKeepsWhatIsNotATuneState(t *testing.T) {
	h := hostchecktest.FixtureHost(t, hostchecktest.Fixtures()["laptop-battery-powersave"])
	for _, content := range []string{`{"foo":1}`, `null`, `{}`, `[]`, `{"writes":[]}`, `{"writes":null}`,
		`{"writes":[{"path":"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor","old":"powersave"}],"extra":1}`} {
		p := filepath.Join(t.TempDir(), "v.json")
		os.WriteFile(p, []byte(content), 0o644)
		if _, err := h.Reset(p); err == nil || !strings.Contains(err.Error(), "not a tune state") {
			t.Errorf("Reset of %s: %v, want it refused as not a tune state", content, err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != content {
			t.Errorf("Reset of %s removed or changed the file: %q %v", content, b, err)
		}
	}
}

// FuzzResetState: whatever a state file holds, reset writes nothing but
// the host's CPU knobs.
func FuzzResetState(f *testing.F) {
	f.Add([]byte(`{"writes":[{"path":"../victim","old":"again"}]}`))
	f.Add([]byte(`{"writes":[{"path":"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor","old":"powersave"}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, state []byte) {
		h := hostchecktest.FixtureHost(t, hostchecktest.Fixtures()["laptop-battery-powersave"])
		victim := filepath.Join(filepath.Dir(h.Root), "victim")
		os.WriteFile(victim, []byte("precious\n"), 0o644)
		p := filepath.Join(t.TempDir(), "state.json")
		os.WriteFile(p, state, 0o644)
		h.Reset(p)
		if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
			t.Fatalf("reset wrote %q outside the knobs from %q", b, state)
		}
	})
}
