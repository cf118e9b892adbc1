// Package benchctl is the benchctl command line as a library: a program
// that registers benchmarks with package harness gets every measuring
// subcommand (list, run, check, tune, reset, compare, ab, nightly,
// calibrate, upload) by calling [Main]:
//
//	package main
//
//	import (
//		"os"
//
//		"github.com/ledgerbench/ledgerbench/benchctl"
//		_ "example.com/userproj/internal/bench" // registers the benchmarks
//	)
//
//	func main() { os.Exit(benchctl.Main()) }
//
// The same binary is re-executed for every fork; Main recognizes the
// child and runs its side. `ab` rebuilds this program (the main package
// that called Main, or --cmd) at two revisions of the user's repository.
//
// Given Go package patterns, list, run, ab and nightly measure those
// packages' ordinary testing.B benchmarks instead: each package's test
// binary is built once (go test -c) and every fork is one process of it
// running one benchmark, so a repository's existing benchmarks get the
// same forks, interleaving, host checks, profiles and history with no
// code change, and no Main of their own is needed.
//
// run, ab, nightly and calibrate differ in the sides they build (one
// program, test binaries, two revisions, the same binary twice) and in
// what they make of the results; they share one pipeline that runs the
// sides interleaved, writes the results file once, shows it and records
// it for --server.
//
// The results server's commands, serve and token, are not in Main: a
// program adds them with [Config]'s Commands (this repository's
// cmd/benchctl does), so a benchmark program links no database driver.
//
// Comparisons count one sample per fork (the median of its iterations);
// `calibrate` measures the false-alarm rate of that on the machine at
// hand.
//
// Exit codes: 0 ok, 1 a benchmark failed or a regression was found, 2 bad
// usage (nothing is written). Main is called once per process.
package benchctl
