package hostcheck

import (
	"os"
	"runtime/debug"
	"slices"
	"strings"
)

// codeFlags are the go build flags that change the code a benchmark
// measures (instrumentation, compiler and linker flags, build tags,
// profile-guided optimization), as GOFLAGS or build settings name them.
var codeFlags = []string{"-race", "-msan", "-asan", "-cover", "-covermode", "-coverpkg", "-gcflags", "-ldflags", "-tags", "-pgo"}

// BuildFlags names the build flags in effect that change the measured
// code: those of this binary's own build (binary=…, from its build
// information: a race-built program measures race-instrumented code) and
// those of $GOFLAGS (GOFLAGS=…, with which the test binaries of go test
// benchmarks and the revisions' programs are built). "" when none: a
// plain build.
func BuildFlags() string {
	var parts []string
	if bi, ok := debug.ReadBuildInfo(); ok {
		var own []string
		for _, s := range bi.Settings {
			if isCodeFlag(s.Key) && s.Value != "" && s.Value != "false" {
				if s.Value == "true" {
					own = append(own, s.Key)
				} else {
					own = append(own, s.Key+"="+s.Value)
				}
			}
		}
		if len(own) > 0 {
			parts = append(parts, "binary="+strings.Join(own, " "))
		}
	}
	var env []string
	for _, f := range strings.Fields(goflags()) {
		name, _, _ := strings.Cut(f, "=")
		if isCodeFlag("-" + strings.TrimLeft(name, "-")) {
			env = append(env, f)
		}
	}
	if len(env) > 0 {
		parts = append(parts, "GOFLAGS="+strings.Join(env, " "))
	}
	return strings.Join(parts, "; ")
}

func isCodeFlag(key string) bool { return slices.Contains(codeFlags, key) }

// goflags is $GOFLAGS.
func goflags() string { return os.Getenv("GOFLAGS") }
