package hostcheck

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

const cpuidHypervisor = cpuid.HYPERVISOR

func featureID(name string) cpuid.FeatureID { return cpuid.ParseFeature(name) }

// fingerprints hashes stable hardware facts (machine-id: never the
// hostname, clocks or temperatures) and the software and tuning
// environment (env-id).
func fingerprints(f *Facts) (machineID, envID string) {
	machine := []string{f.Brand, f.Vendor, fmt.Sprint(f.Family, f.Model, f.Stepping), fmt.Sprint(f.Sockets),
		fmt.Sprint(f.PhysicalCores, f.LogicalCores, f.ThreadsPerCore), fmt.Sprint(f.CacheL1D, f.CacheL1I, f.CacheL2, f.CacheL3),
		fmt.Sprint(f.MemGiB), f.Arch}
	env := []string{f.Kernel, f.Microcode, f.Driver, f.Governor, f.Turbo, f.SMT, f.THP, f.ASLR, f.GoVersion, f.Version}
	if f.Build != "" {
		env = append(env, f.Build) // only then: a plain build keeps its env-id
	}
	return hash(machine), hash(env)
}

func hash(parts []string) string {
	s := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(s[:6])
}
