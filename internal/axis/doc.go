// Package axis compares a run's benchmarks along their implementation
// axes (harness.Param.Baseline): the pull-request tables, every other
// value of an axis against its baseline per benchmark (Tables, Write),
// and run --until-decided's rule of which cases need more forks (Wait),
// looked at in those tables after every round.
//
// The tables are decided by compare.BuildData, by the anytime-valid test
// when sequential. A Wait reads the results file as it will be written
// and never changes it; a row without a decision (failed forks, no
// ratio) is never decided, so its cases stay open until the budget ends.
package axis
