package benchctl

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// TestProgressOfABudgetedRun: a fork of a budgeted run says how much of
// the budget is left, and the ETA of its planned forks is cut at the
// deadline; a fork of another run says neither.
func TestProgressOfABudgetedRun(t *testing.T) {
	var w strings.Builder
	p := newProgress(&w)
	defer p.close()
	p.start = time.Now().Add(-3 * time.Minute) // 3 forks of a minute done
	c := engine.Case{Bench: &harness.Benchmark{Family: "f", Name: "Get"}}
	e := engine.Event{Case: c, Fork: 2, Done: 3, Total: 100, Estimated: time.Minute, Side: "baseline", Deadline: time.Now().Add(90 * time.Second)}
	p.event(e)
	if eta := p.eta(e); eta > 90*time.Second || eta < 80*time.Second {
		t.Errorf("ETA %s of 97 one-minute forks with 90 s of budget left, want the budget's", eta)
	}
	e.End, e.Done = true, 4
	p.event(e)
	if line := w.String(); !strings.Contains(line, "[4/100] BenchmarkGet baseline fork 2: ok (") || !regexp.MustCompile(`, budget left 1m(2[0-9]|30)s\)`).MatchString(line) {
		t.Errorf("progress line %q", line)
	}
	w.Reset()
	e.Deadline = time.Time{}
	p.event(e)
	if strings.Contains(w.String(), "budget") {
		t.Errorf("an unbudgeted fork's line %q", w.String())
	}
}
