// Package harnesstest runs registered benchmarks briefly in process for
// the tests of benchmark families: [Run] returns the case results of a
// selection and fails the test on a run error or any case failure, so a
// family test only asserts what its bodies did. [ParamBench] is a
// declaration with two parameter axes for the tests of expansion and
// selection.
package harnesstest
