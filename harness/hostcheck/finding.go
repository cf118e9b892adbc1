package hostcheck

import (
	"encoding/json"
	"fmt"
)

// Severity grades a finding.
type Severity int

const (
	OK Severity = iota
	Warn
	Fail
)

func (s Severity) String() string {
	switch s {
	case Warn:
		return "warn"
	case Fail:
		return "fail"
	}
	return "ok"
}

func (s Severity) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Finding is one fact about the host and what it means for benchmarks.
type Finding struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	// CPU is the logical CPU the finding is about, -1 for the host.
	CPU     int    `json:"cpu"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// Report is the outcome of Check.
type Report struct {
	Findings []Finding `json:"findings"`
	Pinned   bool      `json:"pinned"`
	// Reasons are the failed findings' messages (why not pinned).
	Reasons   []string `json:"reasons,omitempty"`
	MachineID string   `json:"machineID"`
	EnvID     string   `json:"envID"`
	Facts     Facts    `json:"facts"`
}

// Verdict is "pinned" or "not pinned".
func (r *Report) Verdict() string {
	if r.Pinned {
		return "pinned"
	}
	return "not pinned"
}

// Note is the one-line summary for result files.
func (r *Report) Note() string {
	if r.Pinned {
		return "every check passed"
	}
	if len(r.Reasons) == 1 {
		return r.Reasons[0]
	}
	return fmt.Sprintf("%s (and %d more)", r.Reasons[0], len(r.Reasons)-1)
}

func (r *Report) add(id string, sev Severity, cpu int, msg, fix string) {
	r.Findings = append(r.Findings, Finding{ID: id, Severity: sev, CPU: cpu, Message: msg, Fix: fix})
}

func (r *Report) finish() {
	r.Pinned = true
	r.Reasons = nil
	for _, f := range r.Findings {
		if f.Severity == Fail {
			r.Pinned = false
			r.Reasons = append(r.Reasons, f.Message)
		}
	}
}
