package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// profiles runs the profiling forks of o.Profiles after the measured
// ones, one per kind, side and case; done counts the forks run of total.
// It stops at ctx's end and returns its error.
func (rn *Runner) profiles(ctx context.Context, o Options, cases []Case, sides []Side, srn []*Runner, runs []*result.Run, done *int, total int, forkTime time.Duration) error {
	for _, k := range o.Profiles {
		for s := range sides {
			for i, cr := range runs[s].Cases {
				c := caseOf(sides, cases, s, i)
				if err := ctx.Err(); err != nil {
					return err
				}
				rn.progress(Event{Case: c, Fork: 1, Done: *done, Total: total, Estimated: forkTime, Profile: k, Side: sides[s].Name})
				pr, note := sides[s].Launch.profile(ctx, srn[s], o, k, c, cr, sides[s].Name)
				if note != "" {
					runs[s].ProfileNotes = append(runs[s].ProfileNotes, note)
					*done += len(runs[s].Cases)
					break // the profiler cannot run here: skip it for every case
				}
				cr.Profiles = append(cr.Profiles, pr)
				*done++
				rn.progress(Event{Case: c, Fork: 1, Done: *done, Total: total, End: true, Err: pr.Err, Estimated: forkTime, Profile: k, Side: sides[s].Name})
			}
		}
	}
	return nil
}

// failedCase reports whether a fork of case i failed on any side.
func failedCase(runs []*result.Run, i int) bool {
	for _, r := range runs {
		if len(r.Cases[i].Failures) > 0 {
			return true
		}
	}
	return false
}

// profileFork runs one profiling fork of kind k for a case. A profiler that
// cannot run on this host returns a note instead.
func (rn *Runner) profileFork(ctx context.Context, o Options, k profile.Kind, c Case, cr *result.CaseResult, side, executable string) (result.ProfileRun, string) {
	pr := result.ProfileRun{Kind: string(k)}
	exe, err := rn.executable(executable)
	if err != nil {
		pr.Err = err
		return pr, ""
	}
	dir := filepath.Join(append([]string{rn.ProfileDir, side}, rn.fileName(cr.Case)...)...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		pr.Err = err
		return pr, ""
	}
	p := o.planFor(c, 1)
	p.Lockstep = false // a profiling fork runs alone, after the rounds
	cmd := command{exe, rn.Args, rn.Env}
	switch {
	case k == profile.Perf:
		events := o.PerfEvents
		if len(events) == 0 {
			events = profile.PerfEvents
		}
		if ok, why := profile.PerfStatus(events); !ok {
			return pr, "perf: " + why
		}
		path, argv, env, out, err := profile.PerfCommand(exe, dir, events, rn.Args...)
		if err != nil {
			return pr, "perf: " + err.Error()
		}
		pr.Path = out
		cmd = command{path, argv, append(append([]string(nil), rn.Env...), env...)}
		p.Mode, p.Warmup, p.Measure = result.AverageTime, result.IterSpec{}, result.IterSpec{Count: 1, Ops: o.instructionOps()}
	case k == profile.Instructions:
		pr.Path = filepath.Join(dir, "callgrind.out")
		path, args, err := profile.CallgrindCommand(exe, pr.Path, rn.Args...)
		if err != nil {
			return pr, "instructions: " + err.Error()
		}
		cmd = command{path, args, profile.CallgrindEnv(rn.Env)}
		p.Mode, p.Warmup, p.Measure = result.AverageTime, result.IterSpec{}, result.IterSpec{Count: 1, Ops: o.instructionOps()}
	default:
		pr.Path = filepath.Join(dir, string(k)+".pb.gz")
		p.Profile, p.ProfilePath = string(k), pr.Path
	}
	res, fe := rn.forkOnce(ctx, cmd, p, o.Timeout, rn.logFile(cr.Case, string(k)))
	if fe != nil {
		fe.Benchmark, fe.Fork = cr.Case.Name(), 1
		valgrindFault(k, fe)
		pr.Err = fe
		return pr, ""
	}
	for _, it := range res.iterations {
		if !it.Warmup {
			pr.Ops += it.Total.Ops
		}
	}
	if k == profile.Perf {
		counts, err := profile.ParsePerfStat(pr.Path)
		if err != nil {
			pr.Err = err
		} else if pr.Ops > 0 {
			pr.Counters = map[string]float64{}
			for ev, n := range counts {
				pr.Counters[ev] = n / float64(pr.Ops)
			}
		}
	}
	if k == profile.Instructions {
		total, err := profile.ParseCallgrind(pr.Path)
		switch {
		case err != nil:
			pr.Err = err
		case total == 0 || pr.Ops == 0:
			pr.Err = fmt.Errorf("callgrind counted no instructions in the measured loop (benchmarks with invocation-level hooks time ops one by one outside it)")
		default:
			pr.InstructionsPerOp = float64(total) / float64(pr.Ops)
		}
	}
	return pr, ""
}

// valgrindFault names the failure of a fork run under valgrind that was
// valgrind's own (see profile.ValgrindFault), instead of the crash of the
// benchmark it looks like.
func valgrindFault(k profile.Kind, fe *result.ForkError) {
	if k != profile.Instructions {
		return
	}
	if why := profile.ValgrindFault(append([]string{fe.Fatal}, fe.Tail...)); why != "" {
		fe.Message = why
	}
}

func (o *Options) instructionOps() int64 {
	if o.InstructionOps <= 0 {
		return 20_000
	}
	return o.InstructionOps
}
