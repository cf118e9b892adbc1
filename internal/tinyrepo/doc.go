// Package tinyrepo makes, for tests of the commands that build revisions
// (ab, bisect, nightly), a git repository of a tiny Go module whose
// benchmark program uses this module's harness (by a replace directive to
// this tree): a commit before the program existed, one that adds it, and
// one that makes the measured code 4× slower. It is imported by tests
// only.
package tinyrepo
