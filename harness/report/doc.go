// Package report turns a [result.Run] into files and tables:
//
//   - bench.txt in Go benchmark format ([WriteBenchfmt]), which
//     `go tool benchstat` reads unchanged: one result line per measurement
//     iteration, the header keys of the results format of docs/architecture.md as config lines
//     (cpu byte for byte as go test writes it: [CPUName]), Unit
//     metadata lines, and per-iteration telemetry (fork, frequency probe,
//     drift flag, executed ops) as "# benchctl:" comment lines;
//   - bench.json in JMH's result schema ([WriteJMH]), so JMH Visualizer
//     reads it: score = mean of all measurement iterations, scoreError = the
//     half width of the 99.9 % Student-t interval of the forks' means,
//     rawData per fork;
//   - a console table ([WriteTable]).
//
// Files are written atomically ([WriteFileAtomic]). Writers are pure
// functions of their inputs: given a fixed [Header] the output is
// byte-for-byte reproducible (golden-tested). Nothing here is safe for
// concurrent use on one writer.
package report
