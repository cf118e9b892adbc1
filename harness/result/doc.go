// Package result is the model of what a benchmark run produced: runs,
// cases, forks, iterations, per-op statistics, profiles and fork
// failures. It is data only: the runner fills it in, and the writers
// (report), the comparisons (compare) and the history (history) read it
// without depending on the runner.
//
// Values are plain structs, safe to read from many goroutines once the
// run that produced them has returned; nothing here synchronizes writes.
package result
