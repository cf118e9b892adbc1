package hostcheck

import (
	"strings"
	"testing"
)

// TestBuildFlagsChangeTheEnvironment: the build flags that change the
// measured code (GOFLAGS's -race, this binary's own race build) are a
// fact of the environment, and move its env-id; the others (-buildvcs)
// are not, and an empty one leaves the env-id as it was.
func TestBuildFlagsChangeTheEnvironment(t *testing.T) {
	t.Setenv("GOFLAGS", "-buildvcs=false -race -tags=x")
	got := BuildFlags()
	if !strings.Contains(got, "GOFLAGS=-race -tags=x") || strings.Contains(got, "buildvcs") {
		t.Errorf("BuildFlags with GOFLAGS=-buildvcs=false -race -tags=x: %q", got)
	}
	if raceEnabled && !strings.Contains(got, "binary=-race") {
		t.Errorf("a race-built binary's BuildFlags: %q", got)
	}
	t.Setenv("GOFLAGS", "-buildvcs=false")
	if got := BuildFlags(); !raceEnabled && got != "" {
		t.Errorf("BuildFlags of a plain build with GOFLAGS=-buildvcs=false: %q, want none", got)
	}
	f := &Facts{Kernel: "k", GoVersion: "go1"}
	_, plain := fingerprints(f)
	f.Build = "GOFLAGS=-race"
	_, race := fingerprints(f)
	if plain == race {
		t.Error("a -race build has the env-id of a plain one")
	}
	f.Build = ""
	if _, again := fingerprints(f); again != plain {
		t.Error("an empty Build moved the env-id")
	}
}
