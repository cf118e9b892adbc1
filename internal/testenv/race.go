package testenv

import (
	"os"
	"strings"
)

// NoExitSleep makes the processes a test starts from its own binary (its
// forks, its command-line runs) exit as soon as they are done when that
// binary is race-built: the race runtime otherwise sleeps GORACE's
// atexit_sleep_ms, 1 s by default, before every exit, to catch races of
// goroutines still running then, and a test of forks starts hundreds of
// them. Races while they run are reported as before. A GORACE that sets
// atexit_sleep_ms is kept. Call it in TestMain, before m.Run.
func NoExitSleep() {
	v := os.Getenv("GORACE")
	if strings.Contains(v, "atexit_sleep_ms") {
		return
	}
	os.Setenv("GORACE", strings.TrimSpace(v+" atexit_sleep_ms=0"))
}
