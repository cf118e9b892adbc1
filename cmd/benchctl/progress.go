package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/ledgerbench/ledgerbench/harness"
)

// progress reports forks as they run: on a terminal, one line redrawn in
// place with an ETA; otherwise one plain line per finished fork.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	fork  time.Time
}

func newProgress(w io.Writer) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &progress{w: w, tty: tty, start: time.Now()}
}

func (p *progress) event(e harness.Event) {
	if !e.End {
		p.fork = time.Now()
		if p.tty {
			fmt.Fprintf(p.w, "\r\033[K[%d/%d] %s fork %d  ETA %s", e.Done+1, e.Total, e.Case.Name(), e.Fork, p.eta(e).Round(time.Second))
		}
		return
	}
	status := "ok"
	if e.Err != nil {
		status = "FAILED"
	}
	if p.tty {
		if e.Err != nil {
			fmt.Fprintf(p.w, "\r\033[K[%d/%d] %s fork %d FAILED\n", e.Done, e.Total, e.Case.Name(), e.Fork)
		}
		if e.Done == e.Total {
			fmt.Fprintf(p.w, "\r\033[K")
		}
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s fork %d: %s (%s)\n", e.Done, e.Total, e.Case.Name(), e.Fork, status, time.Since(p.fork).Round(time.Millisecond))
}

// eta extrapolates from the forks done so far, or from the planned fork
// length before the first one ends.
func (p *progress) eta(e harness.Event) time.Duration {
	left := e.Total - e.Done
	per := e.Estimated
	if e.Done > 0 {
		per = time.Since(p.start) / time.Duration(e.Done)
	}
	return per * time.Duration(left)
}
