// Package gotest finds, builds and reads the testing.B benchmarks of Go
// packages, for a runner that measures them in processes of its own.
//
// [Packages] resolves package patterns with go list, from the module of a
// directory (so a dependency in its module graph, such as
// github.com/cespare/xxhash/v2, is a valid pattern). [Build] compiles one
// package's test binary once with go test -c. [Benchmarks] lists a
// binary's benchmarks: the top-level ones from -test.list, then their
// sub-benchmarks, discovered by running each selected top-level benchmark
// once with -test.benchtime=1x in a process of its own, bounded by a
// timeout, so one that hangs or crashes is reported and kept as one
// benchmark. [RunArgs] is the command line that runs exactly one benchmark
// (every element of its path matched exactly), [Run] runs a [Process] of
// the binary and reads its output as it arrives into an [Outcome] (the
// benchmark's result lines, its failure or skip, go test's PASS, the lines
// it could not count; a process silent too long is killed as hung), and
// [ParseLine] reads one line of the binary's output. The listing and Run
// cut output into lines with one splitter, bounded per line.
//
// The selection pattern has go test -bench's semantics: split at slashes
// outside brackets and parentheses, each element an unanchored regular
// expression matched against the name element at its level ([Split]).
//
// Every function that runs the go command or a test binary takes a
// context and returns an error that carries the command's own output (a
// compiler error, a panic); none prints.
package gotest
