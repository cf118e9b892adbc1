// Package histgen writes synthetic git histories for bisection: a tiny
// module with a registered benchmark (Work, a loop of a number of
// rounds) and this module's harness vendored into its tree, so that the
// history builds on its own and its builds are decided by its commits.
// Commit 0 is the good end; each later commit changes a note, and the
// commits a [Spec] names also multiply Work's rounds (a planted change of
// known size at a known commit) or do not compile. The benchmark is
// tiny/WorkLoop in the suite "history".
//
// Tests of bisect use it with large changes; the measurements of its
// accuracy (cmd/histgen) with small ones.
package histgen
