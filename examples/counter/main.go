// Command counter runs the counter benchmarks with benchctl's CLI.
package main

import (
	"os"

	"github.com/ledgerbench/ledgerbench/benchctl"

	_ "example.com/counter/bench" // registers the benchmarks
)

func main() { os.Exit(benchctl.Main()) }
