// Package nightly is `benchctl nightly` as a library: [Run] checks the
// host (refusing one that is not pinned unless AllowUnpinned), runs the
// selected benchmarks with the running binary as HEAD — against an anchor
// revision when there is one, built as ab builds its baseline — records
// the run append-only under Results/nightly/<machine-id>/, reads every run
// of the machine, finds the change points of each series
// (harness/history), bisects each new regression when asked (with
// internal/bisect, on the night's session) or else explains it by the
// functions behind it (an A/B of its two runs' commits with
// internal/ab, into Results/explain/<machine-id>/), and regenerates
// Results/README.md, drawing each series with a [ChartFunc] when one is
// given (so a program that draws no chart links no plotting package).
//
// The [Result] names the recorded run, the new regressions and the
// bisections' server files; Run's error is the night's outcome: a failed
// fork, or the new regressions (session.FailedError), or bad input
// (session.UsageError).
package nightly
