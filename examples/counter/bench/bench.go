// Package bench declares the counter benchmarks, in suite "counter":
//
//   - Add: one op, Add(1), on a counter shared by every goroutine, for both
//     implementations (parameter impl);
//   - AddWhileReading: a group, one goroutine adding while another reads,
//     with the adds each read observed as a custom metric (adds/op).
package bench

import (
	"fmt"

	"github.com/ledgerbench/ledgerbench/harness"

	"example.com/counter/counter"
)

var impl = harness.Param{Name: "impl", Values: []string{"mutex", "atomic"}, Enum: true,
	Doc: "the counter implementation", Baseline: "mutex"}

func newCounter(t *harness.Trial) (counter.Counter, error) {
	c, ok := counter.New(t.Param("impl"))
	if !ok {
		return nil, fmt.Errorf("no counter %q", t.Param("impl"))
	}
	return c, nil
}

func init() {
	harness.Register(&harness.Benchmark{
		Family: "counter", Name: "Add", Suites: []string{"counter"},
		Doc:    "Add(1) on a counter shared by every goroutine",
		Params: []harness.Param{impl},
		Setup: func(t *harness.Trial) error {
			c, err := newCounter(t)
			if err != nil {
				return err
			}
			t.Run(func(w *harness.Worker) (func(), error) {
				return func() { w.Sink(uint64(c.Add(1))) }, nil
			})
			return nil
		},
	})
	harness.Register(&harness.Benchmark{
		Family: "counter", Name: "AddWhileReading", Suites: []string{"counter"},
		Doc:    "one goroutine adds while another reads; adds/op is how many adds each read saw",
		Params: []harness.Param{impl},
		Units:  []harness.UnitInfo{{Unit: "adds/op", Better: "higher"}},
		Setup: func(t *harness.Trial) error {
			c, err := newCounter(t)
			if err != nil {
				return err
			}
			t.Group(
				harness.Op{Name: "add", Bind: func(w *harness.Worker) (func(), error) {
					return func() { w.Sink(uint64(c.Add(1))) }, nil
				}},
				harness.Op{Name: "read", Bind: func(w *harness.Worker) (func(), error) {
					seen := w.Counter("adds/op")
					last := int64(0)
					return func() {
						n := c.Load()
						seen.Add(n - last)
						last = n
					}, nil
				}},
			)
			return nil
		},
	})
}
