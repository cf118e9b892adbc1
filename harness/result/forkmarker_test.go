package result

import (
	"maps"
	"testing"
)

func TestForkMarkers(t *testing.T) {
	data := []byte(`goos: linux
pkg: x
BenchmarkA-2 10 5 ns/op
# benchctl: fork=1 iter=0 mode=avgt
BenchmarkA-2 10 6 ns/op
# benchctl: fork=2 iter=0 mode=avgt
BenchmarkG/op=all-2 10 5 ns/op
# benchctl: fork=3 iter=0 mode=avgt
BenchmarkG/op=read-2 10 5 ns/op
BenchmarkG/op=write-2 10 5 ns/op
BenchmarkG/op=all-2 10 5 ns/op
# benchctl: fork=4 iter=0 mode=avgt
# benchctl: BenchmarkG fork 4: a note
BenchmarkG-2 20000 300 instructions/op
`)
	want := map[int]int{3: 1, 5: 2, 7: 3, 9: 3, 10: 3, 11: 4, 14: 4}
	if got := ForkMarkers(data); !maps.Equal(got, want) {
		t.Errorf("ForkMarkers = %v, want %v", got, want)
	}
	if got := ForkMarkers([]byte("BenchmarkA 10 5 ns/op\nBenchmarkA 10 5 ns/op\n")); len(got) != 0 {
		t.Errorf("a file of go test has markers: %v", got)
	}
}
