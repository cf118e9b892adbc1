// Package fleet spreads a comparison's rounds over the benchmark machines
// of a fleet, on River (github.com/riverqueue/river), a job queue in
// PostgreSQL: the results store's database holds River's tables (migrated
// by River's own migrator, [Migrate]) and the fleet's own two, the
// artifacts and the results.
//
// A job ([Rounds]) is some rounds of some cases of one comparison, for
// one class of machine: machines of one fingerprint form a class, and a
// class is a River queue ([QueueOf]), so a job is only ever claimed by an
// agent of its class. The guarantees are River's, not this package's:
//
//   - claiming: a job is worked by one agent at a time (River locks it
//     with FOR UPDATE SKIP LOCKED and marks it running with the attempt);
//   - retries with backoff: a job whose run fails is retried, up to
//     MaxAttempts, then discarded with every attempt's error kept;
//   - rescue: a job left running by an agent that died (SIGKILL, a lost
//     machine) is made available again after the rescue delay and
//     claimed by another agent;
//   - unique jobs: a job is unique by its arguments, so a coordinator
//     started again with the same comparison gets the jobs it inserted
//     before (done or not) instead of new ones;
//   - periodic jobs: a class's [Nightly] is a periodic job that every
//     agent schedules and only River's elected leader enqueues, one
//     [Night] a night (unique by its class and night, so neither a new
//     leader nor a nightly registered again adds a second);
//   - transactional completion: an [Agent] writes a job's result file and
//     marks the job completed in one transaction (river.JobCompleteTx),
//     and the result table is keyed by the job, so a result is counted
//     exactly once and an attempt that did not finish leaves nothing.
//
// An [Agent] works its class's queue (a comparison's jobs and its
// class's nights), one job at a time (a benchmark machine measures one
// thing at once), running each job with the
// caller's [Runner], delivering each night's file (Agent.Deliver: to the
// results server) and saying every few seconds that it is there;
// [Coordinator] inserts a comparison's jobs, waits for them and gathers
// their result files in job order.
//
// On top of them, [Remote] is a measurement on a class (ab's Remote: an
// A/B's two programs, or a run's one, or each side's go test binaries
// with their packages' directories, [PublishDir]): it publishes the
// programs by the SHA-256 of their bytes ([Publish]), cuts the work into jobs of all the
// rounds of as many whole comparison groups ([engine.Groups]) as fit a
// job's planned time (a case's rounds cut over jobs of at least
// MinJobRounds when they do not fit), each case described
// ([engine.Described]) so that the agent needs neither a checkout nor a
// toolchain, waits (saying
// so when no agent of the class has been seen for a minute), and writes
// each agent's files as one, a stratum of the comparison; its Schedule
// registers a run's program and cases as the class's nightly instead
// ([RegisterNightly]). A [Machine] is the agent's side: it fetches the
// programs and checks their hash ([Fetch], and [FetchDir] for a
// package's directory; an artifact that does not hash is cancelled with
// the reason, not retried), runs the job's rounds with
// the engine on its prepared session, and returns the results file,
// whose header names the comparison, the rounds, the attempt and the
// agent, and, for a run's one program, the commit that built it.
package fleet
