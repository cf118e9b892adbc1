package benchctl

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// progress reports forks as they run: on a terminal, one line redrawn in
// place with an ETA; otherwise one plain line per finished fork.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	start time.Time
	fork  time.Time
	cur   *engine.Event // the running fork, redrawn by the ticker
	stop  chan struct{}
}

func newProgress(w io.Writer) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	p := &progress{w: w, tty: tty, start: time.Now(), stop: make(chan struct{})}
	if tty {
		go p.tick()
	}
	return p
}

// tick redraws the running fork's line twice a second so the ETA moves.
func (p *progress) tick() {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.cur != nil {
				p.draw(*p.cur)
			}
			p.mu.Unlock()
		}
	}
}

// close stops the ticker.
func (p *progress) close() {
	close(p.stop)
	p.mu.Lock()
	p.cur = nil
	p.mu.Unlock()
}

func forkLabel(e engine.Event) string {
	label := fmt.Sprintf("fork %d", e.Fork)
	if e.Profile != "" {
		label = "profile " + string(e.Profile)
	}
	if e.Side != "" {
		label = e.Side + " " + label
	}
	return label
}

func (p *progress) draw(e engine.Event) {
	fmt.Fprintf(p.w, "\r\033[K[%d/%d] %s %s  %s  ETA %s%s", e.Done+1, e.Total, e.Case.Name(), forkLabel(e),
		time.Since(p.fork).Round(100*time.Millisecond), p.eta(e).Round(time.Second), budgetLeft(e))
}

// budgetLeft is ", budget left D" for a fork of a budgeted run ("" for
// another): the rounds end by then, whatever the ETA of the planned ones.
func budgetLeft(e engine.Event) string {
	if e.Deadline.IsZero() {
		return ""
	}
	return fmt.Sprintf(", budget left %s", max(time.Until(e.Deadline), 0).Round(time.Second))
}

func (p *progress) event(e engine.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !e.End {
		p.fork = time.Now()
		if p.tty {
			p.cur = &e
			p.draw(e)
		}
		return
	}
	p.cur = nil
	status := "ok"
	if e.Err != nil {
		status = "FAILED"
	}
	if p.tty {
		if e.Err != nil {
			fmt.Fprintf(p.w, "\r\033[K[%d/%d] %s %s FAILED\n", e.Done, e.Total, e.Case.Name(), forkLabel(e))
		}
		if e.Done == e.Total {
			fmt.Fprintf(p.w, "\r\033[K")
		}
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s %s: %s (%s%s)\n", e.Done, e.Total, e.Case.Name(), forkLabel(e), status, time.Since(p.fork).Round(time.Millisecond), budgetLeft(e))
}

// eta extrapolates from the forks done so far (or the planned fork length
// before the first one ends), minus the running fork's elapsed time; a
// budgeted run ends by its deadline.
func (p *progress) eta(e engine.Event) time.Duration {
	per := e.Estimated
	if e.Done > 0 {
		per = p.fork.Sub(p.start) / time.Duration(e.Done)
	}
	eta := per*time.Duration(e.Total-e.Done) - time.Since(p.fork)
	if !e.Deadline.IsZero() {
		eta = min(eta, time.Until(e.Deadline))
	}
	return max(eta, 0)
}
