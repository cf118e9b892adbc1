package benchctl

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/spf13/cobra"
)

// declaresNone refuses a run or listing of the registered benchmarks of
// a program that registers none (the tool a module adds with go get
// -tool): it says what the tool measures instead.
func (a *app) declaresNone(cmd string) error {
	if len(a.registry.Benchmarks()) > 0 {
		return nil
	}
	return usageError(fmt.Errorf("%s declares no benchmarks (no package of it calls harness.Register): name your module's packages to measure their testing.B benchmarks (`%s %s ./...`), or run a benchmark program whose main imports the packages that register yours and calls benchctl.Main (ab and bisect build it with --cmd)", a.name, a.name, cmd))
}

// outsideHome refuses a run of the registered benchmarks, chosen by
// default (no package arguments, no --suite or --bench), of a program
// whose benchmarks belong to another module (Config.Home) than the one of
// the user's tree: a user who installed this repository's benchctl to
// measure their own module would otherwise measure this repository's
// suites. It says how to run theirs.
func (a *app) outsideHome(cmd *cobra.Command) error {
	if a.home == "" || cmd.Flags().Changed("suite") || cmd.Flags().Changed("bench") {
		return nil
	}
	mod := moduleOf(a.srcDir())
	if mod == a.home {
		return nil
	}
	where := "outside any Go module"
	if mod != "" {
		where = "in module " + mod
	}
	return usageError(fmt.Errorf("the registered benchmarks of %s are %s's own, and you are %s: to measure your module's testing.B benchmarks, name their packages (`%s %s ./...`); to run %s's suites anyway, pass --suite (%s)",
		a.name, a.home, where, a.name, cmd.Name(), a.home, strings.Join(engine.Suites(a.registry), ", ")))
}

// moduleOf is the module path of the Go module holding dir ("" outside
// one, or without the go command).
func moduleOf(dir string) string {
	cmd := exec.Command("go", "env", "GOMOD")
	cmd.Dir = dir
	out, err := cmd.Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return ""
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
