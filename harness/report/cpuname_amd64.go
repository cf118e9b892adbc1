package report

// cpuidLeaf executes CPUID with leaf in EAX and sub in ECX.
func cpuidLeaf(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// brandString is the CPUID brand string (leaves 0x80000002 to
// 0x80000004) by Go's rule, or "" when the CPU has none.
func brandString() string {
	if max, _, _, _ := cpuidLeaf(0x80000000, 0); max < 0x80000004 {
		return ""
	}
	b := make([]byte, 0, 48)
	for leaf := uint32(0x80000002); leaf <= 0x80000004; leaf++ {
		a, bx, c, d := cpuidLeaf(leaf, 0)
		for _, r := range [4]uint32{a, bx, c, d} {
			b = append(b, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
		}
	}
	return goBrand(b)
}
