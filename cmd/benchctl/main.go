// Command benchctl runs this repository's benchmark families (the broker
// entry cache, deduplication, the entry location index, the cursor
// container and the harness's own) with benchctl's CLI; see
// `benchctl help`.
package main

import (
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	_ "github.com/ledgerbench/ledgerbench/bench/catchup"
	_ "github.com/ledgerbench/ledgerbench/bench/cursor"
	_ "github.com/ledgerbench/ledgerbench/bench/dedup"
	_ "github.com/ledgerbench/ledgerbench/bench/eviction"
	_ "github.com/ledgerbench/ledgerbench/bench/insert"
	_ "github.com/ledgerbench/ledgerbench/bench/location"
	_ "github.com/ledgerbench/ledgerbench/bench/read"
	_ "github.com/ledgerbench/ledgerbench/bench/self"
	"github.com/ledgerbench/ledgerbench/benchctl"
	"github.com/ledgerbench/ledgerbench/benchctl/charts"
	"github.com/ledgerbench/ledgerbench/benchctl/fleet"
	"github.com/ledgerbench/ledgerbench/internal/servecmd"
)

// main is benchctl's CLI with the results server's commands (serve,
// token), the fleet's (agent, fleet migrate, ab --fleet) and the charts, which a benchmark program's own main leaves out. Its registered
// benchmarks are this repository's: run elsewhere, it measures them only
// when asked for by --suite or --bench.
func main() {
	commands := func(name string) []*cobra.Command { return append(servecmd.Commands(name), fleet.Commands(name)...) }
	os.Exit(benchctl.Config{Commands: commands, Charts: charts.Draw, Home: home()}.Main())
}

// home is the module of this program's package (cmd/benchctl of it),
// whichever module it was built in: `go tool benchctl` of another module
// builds it with that module as the main one.
func home() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return strings.TrimSuffix(bi.Path, "/cmd/benchctl")
	}
	return ""
}
