package report

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// BenchmarkCPULine does nothing: TestCPUNameIsGoTests runs it for the cpu:
// line go test writes.
func BenchmarkCPULine(b *testing.B) {
	for b.Loop() {
	}
}

// TestCPUNameIsGoTests: the cpu: key benchctl writes is the one this test
// binary's own testing package writes before its benchmarks, byte for
// byte (trailing spaces included).
func TestCPUNameIsGoTests(t *testing.T) {
	out, err := exec.Command(os.Args[0], "-test.run", "^$", "-test.bench", "^BenchmarkCPULine$", "-test.benchtime", "1x").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if name, ok := strings.CutPrefix(l, "cpu: "); ok {
			if got := CPUName(); got != name {
				t.Errorf("CPUName() = %q, go test writes %q", got, name)
			}
			return
		}
	}
	if got := CPUName(); got != "unknown" {
		t.Errorf("go test writes no cpu: line, CPUName() = %q\n%s", got, out)
	}
}

// TestGoBrandAndModelName: Go's rules for a brand string and a
// /proc/cpuinfo head.
func TestGoBrandAndModelName(t *testing.T) {
	padded := append([]byte("   AMD EPYC 9005 Processor          "), make([]byte, 12)...)
	if got := goBrand(padded); got != "AMD EPYC 9005 Processor          " {
		t.Errorf("goBrand = %q", got)
	}
	for head, want := range map[string]string{
		"processor\t: 0\nmodel name\t: Some CPU\ncpu MHz\t\t: 2000.000\n":     "Some CPU @ 2000.000MHz",
		"processor\t: 0\nmodel name\t: Xeon @ 2.40GHz\ncpu MHz\t\t: 2400.0\n": "Xeon @ 2.40GHz",
		"processor\t: 0\nModel Name\t: Arm Core\n":                            "Arm Core",
		"processor\t: 0\nBogoMIPS\t: 50.00\n":                                 "",
	} {
		if got := modelName([]byte(head)); got != want {
			t.Errorf("modelName(%q) = %q, want %q", head, got, want)
		}
	}
}
