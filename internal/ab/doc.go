// Package ab is the A/B comparison of two revisions, callable without the
// CLI: [Run] builds the benchmark program (or the packages' test binaries)
// at both revisions, runs their forks interleaved or in a duet on a
// prepared [session.Session], writes ab.txt, and decides every row through
// [compare.BuildData] under [compare.ABOptions] — the decision every A/B
// path of the project uses (bisect's steps, calibrate's comparisons). With
// Confirm, a regression must be found again by a second run; with a
// [Policy], a regression fails only past its benchmark's threshold, and
// an expected one is waived (Result.Waived). A budgeted comparison (its
// engine options' Budgeted) is bounded by its budget from Options.Started:
// builds, first rounds, confirmation and explanation included; what
// cannot fit is refused before measuring, or not started and said. A
// Result renders itself for the pull request ([Result.Markdown]), as the
// comment a CI job posts ([Result.Comment]) and as ab --json's answer
// ([Result.JSON]).
//
// Its helpers build the sides of any command that runs revisions (bisect,
// nightly): [OpenRepo], [FindProgram], [ResolvePair], [NewWorkspace] and
// [BuildPair]. Errors are [session.UsageError] (bad input) or
// [session.FailedError]; a Result is returned with every error raised
// after the results were obtained, so its table can still be shown.
package ab
