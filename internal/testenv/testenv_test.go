package testenv

import (
	"os"
	"testing"
)

// fakeT records what MustHave did with a test.
type fakeT struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Skip(...any)           { f.skipped = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }

func TestMustHave(t *testing.T) {
	for _, ci := range []string{"", "1"} {
		t.Setenv("LEDGERBENCH_CI", ci)
		f := &fakeT{}
		MustHave(f, "no-such-tool-ledgerbench")
		if f.skipped != (ci == "") || f.failed != (ci != "") {
			t.Errorf("LEDGERBENCH_CI=%q: skipped %v, failed %v", ci, f.skipped, f.failed)
		}
		f = &fakeT{}
		MustHave(f, "go")
		if f.skipped || f.failed {
			t.Errorf("LEDGERBENCH_CI=%q: go is installed, yet skipped %v, failed %v", ci, f.skipped, f.failed)
		}
	}
}

// TestNoExitSleep: the race runtime's exit sleep is turned off beside
// the user's other GORACE options, and a sleep the user chose is kept.
func TestNoExitSleep(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "atexit_sleep_ms=0"},
		{"halt_on_error=1", "halt_on_error=1 atexit_sleep_ms=0"},
		{"atexit_sleep_ms=50 log_path=/tmp/r", "atexit_sleep_ms=50 log_path=/tmp/r"},
	} {
		t.Setenv("GORACE", c.in)
		NoExitSleep()
		if got := os.Getenv("GORACE"); got != c.want {
			t.Errorf("GORACE %q: %q, want %q", c.in, got, c.want)
		}
	}
}
