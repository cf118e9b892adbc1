// Package testenv says whether a test may run here: [MustHave] skips a
// test whose outside tool (valgrind, perf, git) is not installed, except
// under LEDGERBENCH_CI, which CI sets after installing every tool its
// tests need: there a missing tool fails the test, so that no test
// passes in CI by not running.
//
// It also sets up what tests run in: a PostgreSQL database of a test's
// own ([PostgresDB]), race-built forks that exit without the race
// runtime's sleep ([NoExitSleep]), and a build cache of a test binary's
// own, so that the comparisons its tests make leave nothing in the
// user's ([PrivateBuildCache]).
package testenv
