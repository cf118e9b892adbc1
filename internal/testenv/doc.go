// Package testenv says whether a test may run here: [MustHave] skips a
// test whose outside tool (valgrind, perf, git) is not installed, except
// under LEDGERBENCH_CI, which CI sets after installing every tool its
// tests need: there a missing tool fails the test, so that no test
// passes in CI by not running.
package testenv
