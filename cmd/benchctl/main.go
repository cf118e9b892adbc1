// Command benchctl runs this repository's benchmark families (the broker
// entry cache, deduplication, the entry location index, the cursor
// container and the harness's own) with benchctl's CLI; see
// `benchctl help`.
package main

import (
	"os"

	_ "github.com/ledgerbench/ledgerbench/bench/catchup"
	_ "github.com/ledgerbench/ledgerbench/bench/cursor"
	_ "github.com/ledgerbench/ledgerbench/bench/dedup"
	_ "github.com/ledgerbench/ledgerbench/bench/eviction"
	_ "github.com/ledgerbench/ledgerbench/bench/insert"
	_ "github.com/ledgerbench/ledgerbench/bench/location"
	_ "github.com/ledgerbench/ledgerbench/bench/read"
	_ "github.com/ledgerbench/ledgerbench/bench/self"
	"github.com/ledgerbench/ledgerbench/benchctl"
)

func main() { os.Exit(benchctl.Main()) }
