package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// PrivateBuildCache points XDG_CACHE_HOME, under which ab, bisect and
// nightly keep programs built at commits by default, at a new temporary
// directory, so that a test binary's comparisons leave nothing in the
// user's cache, and pins GOCACHE to go's own build cache, whose default
// lies under XDG_CACHE_HOME too (a cold one would compile every
// revision's dependencies again). For TestMain: it returns the
// directory, to be removed after the tests.
func PrivateBuildCache() (string, error) {
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOCACHE: %w", err)
	}
	dir, err := os.MkdirTemp("", "ledgerbench-test-cache-")
	if err != nil {
		return "", err
	}
	os.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	os.Setenv("XDG_CACHE_HOME", dir)
	return dir, nil
}
