package fleet

import (
	"time"

	"github.com/riverqueue/river"
)

// Kind is the River kind of a [Rounds] job.
const Kind = "benchctl_rounds"

// Rounds is one job: rounds First to First+Count-1 of Cases, of the
// comparison Comparison, on a machine of Class. Sides name each side's
// program by the SHA-256 of its bytes: an agent runs only bytes that
// hash to it. Spec is the run's options as the coordinator planned them
// (warmup, measurement, seed), opaque to the queue. Timeout bounds the
// job's run (0: DefaultTimeout): a run past it is cancelled and retried,
// and a job left running that long by an agent that died is rescued.
type Rounds struct {
	Comparison string        `json:"comparison"`
	Class      string        `json:"class"`
	Sides      []Artifact    `json:"sides"`
	Cases      []string      `json:"cases"`
	First      int           `json:"first"`
	Count      int           `json:"count"`
	Spec       []byte        `json:"spec,omitempty"`
	Timeout    time.Duration `json:"timeout,omitempty"`
}

// DefaultTimeout bounds a job that names no timeout of its own.
const DefaultTimeout = 2 * time.Hour

// timeout is the job's bound.
func (r Rounds) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

// Artifact is a side's program, by content hash; or, for a side of go
// test benchmarks, each package's test binary and directory.
type Artifact struct {
	Side   string         `json:"side"`
	SHA256 string         `json:"sha256,omitempty"`
	Tests  []TestArtifact `json:"tests,omitempty"`
}

// TestArtifact is a package's test binary (Publish) and the directory
// its tests run in (PublishDir), by content hash.
type TestArtifact struct {
	Pkg    string `json:"pkg"`
	Binary string `json:"binary"`
	Dir    string `json:"dir"`
}

// Kind is River's job kind.
func (Rounds) Kind() string { return Kind }

// MaxAttempts is how many times a job runs before it is discarded: a
// job that fails the same way on that many attempts names its cases and
// stops.
const MaxAttempts = 3

// InsertOpts puts the job on its class's queue, unique by its arguments
// in every state (a coordinator started again gets its jobs back, done
// or not).
func (r Rounds) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueOf(r.Class), MaxAttempts: MaxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}
