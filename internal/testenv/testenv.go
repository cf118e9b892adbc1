package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// CI reports whether the tests run in CI (LEDGERBENCH_CI is set), where
// every tool is installed.
func CI() bool { return os.Getenv("LEDGERBENCH_CI") != "" }

// MustHave skips t when the program tool is not on the PATH, and fails
// it instead under CI.
func MustHave(t testing.TB, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		Missing(t, tool+" is not installed")
	}
}

// Missing skips t because of why, something the test needs that this
// machine lacks, and fails it instead under CI.
func Missing(t testing.TB, why string) {
	t.Helper()
	if CI() {
		t.Fatalf("LEDGERBENCH_CI is set, yet %s: CI installs what its tests need", why)
		return
	}
	t.Skip(why)
}
