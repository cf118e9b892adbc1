package engine

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A go test binary's profiles carry the Go version that built it, from its
// build information (this test binary is one); a file without any gives
// "".
func TestBinaryGoVersion(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if got := binaryGoVersion(exe); got != runtime.Version() {
		t.Errorf("binaryGoVersion(this test binary) = %q, want %q", got, runtime.Version())
	}
	notGo := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notGo, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := binaryGoVersion(notGo); got != "" {
		t.Errorf("binaryGoVersion(a shell script) = %q, want \"\"", got)
	}
}
