package benchctl

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// The CLI's tests run benchmarks of their own, in suite "clitest" (and
// one that fails, in no suite but all), known only to this test binary.
func init() {
	op := func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) { return func() {}, nil })
		return nil
	}
	harness.Register(&harness.Benchmark{Family: "clitest", Name: "Noop", Suites: []string{"clitest"}, Setup: op})
	harness.Register(&harness.Benchmark{Family: "clitest", Name: "Alloc", Suites: []string{"clitest"},
		Params: []harness.Param{{Name: "size", Values: []string{"64", "1024"}, Kind: harness.Int}},
		Setup: func(t *harness.Trial) error {
			n := t.Int("size")
			t.Run(func(w *harness.Worker) (func(), error) {
				return func() { harness.Sink(make([]byte, n)) }, nil
			})
			return nil
		}})
	harness.Register(&harness.Benchmark{Family: "clitest", Name: "Enum", Suites: []string{"clitest"},
		Params: []harness.Param{{Name: "kind", Values: []string{"b", "a"}, Enum: true, Baseline: "b"},
			{Name: "even", Values: []string{"2"}, Kind: harness.Int, Valid: func(v string) error {
				if n, _ := strconv.Atoi(v); n%2 != 0 {
					return errors.New("must be even")
				}
				return nil
			}}}, Setup: op})
	harness.Register(&harness.Benchmark{Family: "clitest", Name: "Group", Suites: []string{"clitest"}, Setup: func(t *harness.Trial) error {
		noop := func(w *harness.Worker) (func(), error) { return func() {}, nil }
		t.Group(harness.Op{Name: "left", Bind: noop}, harness.Op{Name: "right", Bind: noop})
		return nil
	}})
	harness.Register(&harness.Benchmark{Family: "clitest", Name: "CliPanic", Setup: func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) { return func() { panic("cli-boom") }, nil })
		return nil
	}})
}

func TestMain(m *testing.M) {
	if engine.IsChild() {
		os.Exit(engine.ChildMain(harness.Default))
	}
	if os.Getenv("BENCHCTL_TEST_CLI") != "" {
		os.Exit(cliMain())
	}
	testenv.NoExitSleep()
	cache, err := testenv.PrivateBuildCache()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}
