package result

import "testing"

func TestTrimProcs(t *testing.T) {
	for in, want := range map[string]string{
		"Get-8": "Get", "Get/size=10-16": "Get/size=10", "Get": "Get", "Get-": "Get-",
		"Get/op=all-2": "Get/op=all", "Get/x=a-b": "Get/x=a-b", "Get-2x": "Get-2x", "-4": "",
	} {
		if got := TrimProcs(in); got != want {
			t.Errorf("TrimProcs(%q) = %q, want %q", in, got, want)
		}
	}
}
