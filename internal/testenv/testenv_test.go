package testenv

import (
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
