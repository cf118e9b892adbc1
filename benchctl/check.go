package benchctl

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
)

func (a *app) hostReport() *hostcheck.Report { return hostcheck.Check(a.env().LocalHost()) }

func (a *app) checkCmd() *cobra.Command {
	var asJSON, strict bool
	c := &cobra.Command{
		Use:   "check [--json] [--strict]",
		Short: "Check that the host is pinned for benchmarking (governor, frequency, turbo, SMT, isolation, load, thermal)",
		Long: `check reports every finding about the host with its severity and the fix,
and the verdict: pinned only when no finding fails.

Exit status: 0 when pinned; 1 when not pinned and --strict; 0 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := a.hostReport()
			if asJSON {
				if err := writeJSON(a.stdout, r); err != nil {
					return failedError(err.Error())
				}
			} else if err := writeFindings(a.stdout, r); err != nil {
				return failedError(err.Error())
			}
			if strict && !r.Pinned {
				return failedError("host not pinned: " + r.Note())
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	c.Flags().BoolVar(&strict, "strict", false, "exit 1 when the host is not pinned")
	return c
}

// writeFindings prints the findings table and the verdict.
func writeFindings(w io.Writer, r *hostcheck.Report) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	t.Header("Severity", "Check", "CPU", "Finding", "Fix")
	for _, f := range r.Findings {
		cpu := "all"
		if f.CPU >= 0 {
			cpu = fmt.Sprint(f.CPU)
		}
		if err := t.Append(f.Severity.String(), f.ID, cpu, f.Message, advice(f)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nverdict: %s\n", r.Verdict())
	for _, reason := range r.Reasons {
		fmt.Fprintf(w, "  - %s\n", reason)
	}
	fmt.Fprintf(w, "machine-id: %s  env-id: %s\n", r.MachineID, r.EnvID)
	return nil
}

// flagAdvice is, by finding ID, the flag that carries out a finding's
// fix.
var flagAdvice = map[string]string{"smt": "--cpus", "isolation": "--cpus", "load": "--idle-load", "thermal": "--cooldown"}

// advice is a finding's fix with the flag that carries it out.
func advice(f hostcheck.Finding) string {
	flag, ok := flagAdvice[f.ID]
	if f.Severity == hostcheck.OK || !ok || f.Fix == "" || strings.Contains(f.Fix, "cannot") {
		return f.Fix
	}
	return f.Fix + " (" + flag + ")"
}
