// Package hostcheck inspects the host a benchmark runs on and pins the
// benchmark to it.
//
// [Check] computes findings from a [Host]: an fs.FS rooted at "/" for
// sysfs and procfs single-value files (so tests feed fixtures), a procfs
// root for the files prometheus/procfs parses (loadavg, stat, cmdline,
// cpuinfo, meminfo), the CPU identity from klauspost/cpuid, and the
// harness's frequency probe. Every [Finding] has a severity, a one-line
// explanation and the fix; the [Report]'s verdict is "pinned" only when no
// finding fails. A file that cannot be read becomes a finding saying so,
// never a silent ok. Where cpufreq is not exposed (virtual machines) the
// frequency can be neither controlled nor observed, the host is not
// pinned, and the probe's measured frequency is the only evidence.
//
// Fingerprints ([Report.MachineID], [Report.EnvID]) hash stable hardware
// facts and the software/tuning environment.
//
// Around a run: [ParseCPUList] and [Affinity] pin forks to CPUs, [Lock]
// keeps two runs from overlapping, [WaitCool] and [WaitIdle] wait (bounded)
// for a cool and idle host, and [Tune] / [Reset] set and restore the
// cpufreq knobs through a state file.
//
// Check is safe for concurrent use; it only reads.
package hostcheck
