package report

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

// CPUName is the processor's name as Go's testing package writes it on
// the cpu: line of go test -bench, byte for byte, so that benchstat puts
// a benchctl file and a go test file of one machine in one table. On x86
// that is the CPUID brand string without its leading spaces and cut at
// its first NUL: the trailing spaces of a padded brand string (AMD's
// are) are kept. Elsewhere it is Linux's /proc/cpuinfo model name (with
// the clock appended when the name lacks one), else cpuid's brand name,
// else "unknown".
func CPUName() string {
	if n := brandString(); n != "" {
		return n
	}
	if n := cpuInfoName(); n != "" {
		return n
	}
	if n := strings.TrimSpace(cpuid.CPU.BrandName); n != "" {
		return n
	}
	return "unknown"
}

// goBrand applies Go's rule to the brand string's 48 bytes.
func goBrand(b []byte) string {
	b = bytes.TrimLeft(b, " ")
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// cpuInfoName reads the first processor's model name from the first 512
// bytes of /proc/cpuinfo, as Go does where the CPU has no brand string.
func cpuInfoName() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	return modelName(head[:n])
}

// modelName is Go's reading of a /proc/cpuinfo head: the "model name"
// (or "Model Name") value, with " @ MHZ" from "cpu MHz" appended unless
// the name already states a clock.
func modelName(head []byte) string {
	var name, mhz string
	sc := bufio.NewScanner(bytes.NewReader(head))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name", "Model Name":
			name = v
		case "cpu MHz", "CPU MHz":
			mhz = v
		}
	}
	if name == "" || mhz == "" || strings.Contains(name, "GHz") || strings.Contains(name, "MHz") {
		return name
	}
	return name + " @ " + mhz + "MHz"
}
