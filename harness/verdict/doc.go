// Package verdict decides what a comparison of two sides found: the
// change of the experiment against the baseline as a ratio with its
// confidence interval, a three-way verdict (changed, same within a
// margin, unknown), the smallest change the samples could have detected,
// and false-discovery-rate control across the rows of a suite.
//
// The statistics work on the logarithms of the samples, so a change is a
// ratio and its interval is symmetric in log space (Kalibera and Jones,
// ISMM 2013, report changes so). [Paired] compares samples taken in pairs
// (the baseline's and the experiment's fork of one round of an
// interleaved or duet A/B): the pair's log ratio cancels what the round's
// host did to both. From 6 pairs (at α = 0.05; the fewest with which the
// test can reach α) it is the Wilcoxon signed-rank test with the
// Hodges–Lehmann estimate and its distribution-free interval, robust to
// the rare disturbed round of a shared host; below that, Student's
// one-sample t-test of the log ratios and its interval. [Unpaired]
// compares independent samples the same way: the Mann-Whitney U test
// with the Hodges–Lehmann shift and interval from 4 a side, Welch's
// t-test of the log values below. Which test decides depends on the
// number of samples only, never on what they say; each gives its p-value
// and interval from one distribution, so "significant" and "the interval
// excludes no change" agree.
//
// [Change.Verdict] is Chromium Pinpoint's three-valued answer with an
// equivalence margin: Changed when the test rejects no change and the
// estimate is at least the margin away from it, Same when the whole
// interval lies inside ±margin (two one-sided tests), Unknown otherwise:
// more samples would decide it. [Change.MDE] is the smallest change the
// same test finds with the given power at the observed spread, and
// [Pairs] how many samples a wanted detectable change needs. [BH] is the
// Benjamini–Hochberg step-up procedure: across many rows it keeps the
// expected share of false findings among the findings at α, and so, when
// nothing changed at all, the chance of any finding at α.
//
// [PairedSequential] and [UnpairedSequential] are the anytime-valid
// counterparts, for comparisons that look after every round and stop
// when a row is decided: the e-value of the t-test's Bayes factor with
// the right-Haar prior on σ (a test martingale over the rounds under
// normal log ratios, whatever σ), its confidence sequence (an interval
// that holds at every number of rounds at once), and [EBH], the
// e-Benjamini–Hochberg procedure across rows. [SequentialMDE] and
// [SequentialPairs] plan for them as PairedMDE and Pairs plan for the
// fixed-n tests.
//
// [Stratified] is the paired comparison over pairs of several hosts, each
// host a stratum: each host's mean log ratio with its own standard error,
// combined weighted by pairs (a Welch–Satterthwaite t interval), and the
// hosts whose own change disagrees with the others' named
// ([Heterogeneity]).
//
// Samples must be positive (times, rates, sizes); a comparison of values
// that are not reports ErrNotPositive.
package verdict
