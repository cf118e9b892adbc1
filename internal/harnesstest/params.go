package harnesstest

import "github.com/ledgerbench/ledgerbench/harness"

// ParamBench is a declaration with two parameter axes (an enumeration
// impl of 2 values, an Int cachedEntries of 2) and an empty Setup, for
// the tests of parameter expansion and selection.
func ParamBench() *harness.Benchmark {
	return &harness.Benchmark{
		Family: "test", Name: "Params", Suites: []string{"x"},
		Params: []harness.Param{
			{Name: "impl", Values: []string{"skiplist", "paged"}, Enum: true},
			{Name: "cachedEntries", Values: []string{"1000", "100000"}, Kind: harness.Int},
		},
		Setup: func(t *harness.Trial) error { return nil },
	}
}
