// Package session is what every measuring command (run, ab, bisect,
// nightly, calibrate) does around the engine: it prepares the host
// ([Prepare]: the host check, --strict, the CPUs, the run lock, the
// waits for a cool and idle host before each fork) and runs a
// [Recording]'s sides interleaved through the same pipeline
// ([Session.Record]): run, encode every side into one Go benchmark-format
// file, report failed forks, write the file (rescuing it to a temporary
// file or stderr when it cannot be written), and say how a run that
// stopped midway ended.
//
// The command packages (internal/ab, …) and the CLI call it with typed
// options; no flag struct crosses into it. Its errors say how the command
// should exit: a [UsageError] is bad input (exit 2), a [FailedError] a run
// that ran and failed or regressed (exit 1). Every result obtained is
// written before either is returned.
package session
