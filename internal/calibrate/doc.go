// Package calibrate measures the error rates of the comparisons benchctl
// makes, on data from this machine: A/A runs (one binary on both sides)
// or runs of a known change (a parameter, or a slowdown planted on side
// B), their rounds interleaved or run as duets, split into many
// independent comparisons of a fixed number of rounds.
//
// Every comparison that claims to be ab's is decided by [Decide]: the
// rounds are written as an A/B file by the results writer of every
// command and read back through compare.BuildData under
// compare.ABOptions, the function that decides the rows of ab, bisect,
// compare and the run's tables. [Rounds] aligns two sides' forks by their
// round (fork number), leaving out a round that lacks a side.
//
// [AA] counts, as references beside ab's test, the comparisons that come
// out significant at α although nothing changed, once with one sample
// per fork (the median of its iterations) and once with one sample per
// iteration (benchstat's way on files without fork markers), with exact
// (Clopper-Pearson) binomial intervals, and the smallest change the
// fork-level test could detect. [PairedRounds] counts ab's verdicts on
// comparisons of a fixed number of rounds (false positives in an A/A,
// detections of a known change in its direction), with the unpaired
// test on the same forks beside it; [Suite] counts how often a whole
// suite's A/A looks changed row by row, to ab's verdicts, and to ab's
// exit status; [AdaptiveRounds] replays ab --detect's rule of adding
// rounds; and [SharedNoise] measures how much of their iterations' noise
// the two sides of a round have in common, the duet's premise. These
// functions read their data and measure nothing themselves.
//
// [Run] is `benchctl calibrate` as a library: it prepares the host (a
// session.Session), runs Trials × Group rounds of the running binary
// against itself (an A/A, a planted slowdown of side B, or a pair of a
// parameter's values) as ab runs them, writes aa.txt, and returns the
// [Report] of the functions above, written as calibration.md and
// calibration.json. With From it reports again on an earlier aa.txt
// ([ReadRuns]) and measures nothing. Its errors are session.UsageError
// (options named as fields) and session.FailedError.
package calibrate
