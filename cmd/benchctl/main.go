// Command benchctl runs ledgerbench's benchmark families in forked worker
// processes with JMH's semantics and writes Go benchmark-format and JMH
// JSON results. See `benchctl help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	_ "github.com/ledgerbench/ledgerbench/bench/catchup"
	_ "github.com/ledgerbench/ledgerbench/bench/cursor"
	_ "github.com/ledgerbench/ledgerbench/bench/dedup"
	_ "github.com/ledgerbench/ledgerbench/bench/eviction"
	_ "github.com/ledgerbench/ledgerbench/bench/insert"
	_ "github.com/ledgerbench/ledgerbench/bench/location"
	_ "github.com/ledgerbench/ledgerbench/bench/read"
	_ "github.com/ledgerbench/ledgerbench/bench/self"
	"github.com/ledgerbench/ledgerbench/harness"
)

func main() {
	if harness.IsChild() {
		os.Exit(harness.ChildMain(harness.Default))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
