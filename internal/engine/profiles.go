package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// profiles runs the profiling forks of o.Profiles after the measured
// ones: for each kind, o.ProfileRounds rounds (one by default), in which
// each case runs on every side back to back, in an order that alternates
// by round. done counts the forks run of total. It stops at ctx's end
// and returns its error.
func (rn *Runner) profiles(ctx context.Context, o Options, cases []Case, sides []Side, srn []*Runner, runs []*result.Run, done *int, total int, forkTime time.Duration) error {
	rounds := o.profileRounds()
	for _, k := range o.Profiles {
		cannot := make([]bool, len(sides)) // the profiler cannot run on the side
		for round := 1; round <= rounds; round++ {
			for i := range cases {
				for j := range sides {
					s := j
					if round%2 == 0 {
						s = len(sides) - 1 - j
					}
					if cannot[s] {
						*done++
						continue
					}
					if err := ctx.Err(); err != nil {
						return err
					}
					cannot[s] = rn.profileOne(ctx, o, k, caseOf(sides, cases, s, i), sides[s], srn[s], runs[s], runs[s].Cases[i], profileRound(o, round), done, total, forkTime)
				}
			}
		}
	}
	return nil
}

// ProfileSides runs only the profiling forks of o (o.Profiles, in
// o.ProfileRounds rounds) of cases on sides, as RunSides runs them after
// the measured forks: for profiles of cases already measured, such as
// the rows an A/B comparison found changed. Each side's Run holds its
// cases' ProfileRuns and no iteration.
func (rn *Runner) ProfileSides(ctx context.Context, o Options, cases []Case, sides []Side) ([]*result.Run, error) {
	if err := rn.check(o, cases, sides); err != nil {
		return nil, err
	}
	runs := newRuns(o, cases, sides)
	srn := rn.sideRunners(sides)
	done := 0
	total := o.profileForks() * len(cases) * len(sides)
	err := rn.profiles(ctx, o, cases, sides, srn, runs, &done, total, forkTime(o))
	for _, run := range runs {
		run.End = time.Now()
	}
	return runs, err
}

// sideRunners are rn's copies for sides, one each, named after it.
func (rn *Runner) sideRunners(sides []Side) []*Runner {
	var out []*Runner
	for s := range sides {
		c := *rn
		c.side, c.plant = sides[s].Name, sides[s].Plant
		out = append(out, &c)
	}
	return out
}

// profileRound is the Round of a profiling fork of round (from 1): 0
// when o takes one of each.
func profileRound(o Options, round int) int {
	if o.ProfileRounds <= 1 {
		return 0
	}
	return round
}

// profileOne runs one profiling fork of kind k of case c on side, and
// records it in cr, or, when the profiler cannot run on the side, its
// note in run (and reports true: skip it for every case).
func (rn *Runner) profileOne(ctx context.Context, o Options, k profile.Kind, c Case, side Side, srn *Runner, run *result.Run, cr *result.CaseResult, round int, done *int, total int, forkTime time.Duration) bool {
	rn.progress(Event{Case: c, Fork: max(round, 1), Done: *done, Total: total, Estimated: forkTime, Profile: k, Side: side.Name})
	sr := *srn
	sr.round = round
	pr, note := side.Launch.profile(ctx, &sr, o, k, c, cr, side.Name)
	*done++
	if note != "" {
		run.ProfileNotes = append(run.ProfileNotes, note)
		return true
	}
	pr.Round = round
	cr.Profiles = append(cr.Profiles, pr)
	rn.progress(Event{Case: c, Fork: max(round, 1), Done: *done, Total: total, End: true, Err: pr.Err, Estimated: forkTime, Profile: k, Side: side.Name})
	return false
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
	dir, err := rn.profileDir(side, cr)
	if err != nil {
		pr.Err = err
		return pr, ""
	}
	p := o.planFor(c, 1)
	p.Lockstep = false // a profiling fork runs alone, after the rounds
	cmd, sampled, note, err := rn.profileCommand(o, k, exe, dir, cr, p, &pr)
	if note != "" || err != nil {
		pr.Err = err
		return pr, note
	}
	res, fe := rn.forkOnce(ctx, cmd, p, o.Timeout, rn.logFile(cr.Case, string(k)))
	pr.GoVersion = res.goVersion
	if fe != nil {
		fe.Benchmark, fe.Fork = cr.Case.Name(), 1
		valgrindFault(k, fe)
		pr.Err = fe
		return pr, ""
	}
	for _, it := range res.iterations {
		switch {
		case it.Warmup:
		case k.Cumulative():
			pr.Ops += it.Executed
		default:
			pr.Ops += it.Total.Ops
		}
	}
	readCounts(k, &pr, exe)
	if sampled != "" {
		pr.Err = writeSamples(sampled, exe, pr.Path, profile.CountedLoop)
	}
	return pr, ""
}

// profileCommand is the command of a profiling fork of kind k of exe,
// writing into dir, with the plan p adjusted for it and pr's path set:
// the program itself for an in-process profiler, else under the
// profiler that wraps it. sampled is perf's data when perf samples the
// CPU; note says why a profiler cannot run here.
func (rn *Runner) profileCommand(o Options, k profile.Kind, exe, dir string, cr *result.CaseResult, p *harness.Plan, pr *result.ProfileRun) (cmd command, sampled, note string, err error) {
	cmd = command{exe, rn.Args, rn.Env}
	switch {
	case k == profile.Perf:
		events := o.PerfEvents
		if len(events) == 0 {
			events = profile.PerfEvents
		}
		if ok, why := profile.PerfStatus(events); !ok {
			return cmd, "", "perf: " + why, nil
		}
		path, argv, env, out, err := profile.PerfCommand(exe, dir, events, rn.Args...)
		if err != nil {
			return cmd, "", "perf: " + err.Error(), nil
		}
		pr.Path = out
		cmd = command{path, argv, append(append([]string(nil), rn.Env...), env...)}
		p.Mode, p.Warmup, p.Measure = result.AverageTime, result.IterSpec{}, result.IterSpec{Count: 1, Ops: o.instructionOps()}
	case k == profile.CPU && o.PerfSampling && profile.Sampleable(exe, profile.CountedLoop):
		path, argv, env, data, err := profile.SampleCommand(exe, dir, rn.Args...)
		if err != nil {
			return cmd, "", "", err
		}
		sampled, pr.Path = data, filepath.Join(dir, "cpu.pb.gz")
		cmd = command{path, argv, append(append([]string(nil), rn.Env...), env...)}
		p.Mode, p.Measure = result.AverageTime, result.IterSpec{Count: 1, Ops: profileN(o.sampled(), cr)}
	case k == profile.Instructions:
		pr.Path = filepath.Join(dir, "callgrind.out")
		path, args, err := profile.CallgrindCommand(exe, pr.Path, rn.Args...)
		if err != nil {
			return cmd, "", "instructions: " + err.Error(), nil
		}
		cmd = command{path, args, profile.CallgrindEnv(rn.Env)}
		p.Mode, p.Warmup, p.Measure = result.AverageTime, result.IterSpec{}, result.IterSpec{Count: 1, Ops: o.instructionOps()}
	default:
		pr.Path = filepath.Join(dir, string(k)+".pb.gz")
		p.Profile, p.ProfilePath = string(k), pr.Path
	}
	return cmd, sampled, "", nil
}

// SampledWindow is the longest window of a CPU profiling fork sampled by
// perf (Options.PerfSampling), in the program's measured time. Perf's
// sampling with call stacks slows a Go program by a quarter to a third
// at 10,000 samples a CPU-second, so the window is about 1 s of sampled
// CPU time: 10,000 samples, 20 times what runtime/pprof takes in a 5 s
// window.
const SampledWindow = 800 * time.Millisecond

// sampled is o with the window of a CPU profiling fork sampled by perf:
// o's measurement, at most SampledWindow.
func (o Options) sampled() Options {
	o.Measure.Time = min(time.Duration(max(o.Measure.Count, 1))*o.Measure.Time, SampledWindow)
	return o
}

// writeSamples converts a sampled fork's perf data to the CPU profile at
// path, keeping the samples inside within, and removes the data.
func writeSamples(data, exe, path string, within ...string) error {
	defer os.Remove(data)
	p, err := profile.ReadSamples(data, exe, within...)
	if err != nil {
		return err
	}
	return profile.Write(p, path)
}

// readCounts reads a wrapping profiler's counts into pr: perf's events
// per op, or callgrind's instructions per op and the file they came from.
func readCounts(k profile.Kind, pr *result.ProfileRun, exe string) {
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
			pr.Callgrind, pr.Exe = []result.CallgrindFile{{Path: pr.Path, Ops: pr.Ops}}, exe
		}
	}
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
