// Package engine runs declared benchmarks: it plans a run (selection by
// suite and pattern, parameter expansion, options and their defaults),
// schedules forks in seeded rounds and across the sides of an A/B run,
// drives each fork child over its link, wraps profiling forks (callgrind,
// perf), and collects everything into the result model (package result).
// The child side ([ChildMain]) receives a plan and runs it with the
// measuring core of package harness. [Shard.Of] deals a run's cases into
// shares for hosts that are handed an index, the same on every host.
//
// Planning errors are *[OptionError] values that name the option, so a
// command line can name its own flag; fork failures never stop a run and
// are recorded per case. A Runner is used by one goroutine at a time.
package engine
