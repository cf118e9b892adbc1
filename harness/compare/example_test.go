package compare_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ledgerbench/ledgerbench/harness/compare"
)

// Comparing two implementations measured in one file, as a pull-request
// table: the column projection /impl splits the results by the name's
// impl= part, the first column being the baseline.
func ExampleBuild() {
	dir, _ := os.MkdirTemp("", "compare")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "bench.txt")
	var text string
	for i := range 6 {
		text += fmt.Sprintf("BenchmarkAdd/impl=mutex 1000000 %d ns/op\nBenchmarkAdd/impl=atomic 1000000 %d ns/op\n", 30+i, 12+i%2)
	}
	os.WriteFile(file, []byte(text), 0o644)
	tables, err := compare.Build([]string{file}, compare.Options{Col: "/impl", Alpha: 0.05})
	if err != nil {
		fmt.Println(err)
		return
	}
	tables.Markdown(os.Stdout, []string{"mutex", "atomic"})
	// Output:
	// **1 of 1 time comparisons changed (0 slower, 1 faster), 0 unknown; false-discovery rate 0.05 across them (Benjamini–Hochberg)**
	//
	// > Change: the estimated ratio with its 95 % interval (by pairs where both sides' forks ran in the same rounds; rank tests from 6 pairs or 4 a side, t-tests below); Verdict: at a false-discovery rate of 0.05 over each unit's rows; Detectable: the smallest change these samples find with 80 % power
	//
	// **sec/op**, median (min–max) of each side
	//
	// | Benchmark |                  mutex |                 atomic |                 Change | Verdict                            | Detectable |
	// |:----------|-----------------------:|-----------------------:|-----------------------:|:-----------------------------------|-----------:|
	// | Add       | 32.50n (30.00n–35.00n) | 12.50n (12.00n–13.00n) | -61.5 % [-64.7, -58.1] | **changed** (p=0.002 q=0.002, n=6) |    ±12.5 % |
}
