// Package calibrate measures the error rates of the comparisons benchctl
// makes, on data from this machine: A/A runs (one binary on both sides,
// forks interleaved), split into many independent comparisons of a fixed
// number of forks a side.
//
// [AA] counts the comparisons that come out significant at α although
// nothing changed, once with one sample per fork (the median of its
// iterations, what compare and ab use) and once with one sample per
// iteration (benchstat's way on files without fork markers), with exact
// (Clopper-Pearson) binomial intervals, and the smallest change the
// fork-level test could detect at the observed spread of forks. [Detect]
// counts how often a known change (two cases that differ by it) is found,
// at a given number of forks a side.
package calibrate
