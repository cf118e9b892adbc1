// Command benchctl is the measuring tool a Go module adds with
// `go get -tool github.com/ledgerbench/ledgerbench/tool/benchctl`: it
// measures that module's testing.B benchmarks and its declared ones (a
// benchmark program named by --cmd), compares, bisects, runs nightly and
// uploads to a results server. It links no SQL driver, no server and no
// plotting package, and registers no benchmarks of its own; this
// repository's cmd/benchctl adds its suites, the server and the charts.
package main

import (
	"os"

	"github.com/ledgerbench/ledgerbench/benchctl"
)

func main() { os.Exit(benchctl.Config{Name: "benchctl"}.Main()) }
