// Package calibrate measures the error rates of the comparisons benchctl
// makes, on data from this machine: A/A runs (one binary on both sides)
// or runs of a known change (a parameter, or a slowdown planted on side
// B), their rounds interleaved or run as duets, split into many
// independent comparisons of a fixed number of rounds.
//
// [AA] counts the comparisons that come out significant at α although
// nothing changed, once with one sample per fork (the median of its
// iterations) and once with one sample per iteration (benchstat's way on
// files without fork markers), with exact (Clopper-Pearson) binomial
// intervals, and the smallest change the fork-level test could detect.
// [PairedRounds] does the same for ab's paired test on the rounds' log
// ratios, with the unpaired test on the same forks beside it, in a
// known change's direction; [Suite] counts how often a whole suite's A/A
// looks changed row by row and under the Benjamini–Hochberg procedure;
// [AdaptiveRounds] replays ab --detect's rule of adding rounds; and
// [SharedNoise] measures how much of their iterations' noise the two
// sides of a round have in common, the duet's premise. Every function
// reads its data and measures nothing itself.
package calibrate
