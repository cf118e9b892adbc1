package session

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// Env is what a command runs in: the program that forks re-execute, where
// its commentary goes, and what the results' header says made them.
type Env struct {
	// Name is the program's name, the prefix of its commentary.
	Name string
	// Command is the command line the header records ("" for a caller
	// without one).
	Command string
	// Executable is the binary forks re-execute ("" = this process's),
	// with ChildArgs and ChildEnv: tests replace them.
	Executable          string
	ChildArgs, ChildEnv []string
	// Stderr receives progress and commentary (default os.Stderr).
	Stderr io.Writer
	// Header, when set, edits each collected header (tests pin host
	// values).
	Header func(*report.Header)
	// Host, when set, replaces the local host (tests feed fixtures).
	Host func() *hostcheck.Host
	// Progress, when set, starts showing one measurement's forks: event
	// is told about each, done when the run ends.
	Progress func() (event func(engine.Event), done func())
	// Wrote, when set, is told of every results file written.
	Wrote func(path string)
	// Option, when set, names an option in the words of the caller (a
	// command line's flag) where commentary quotes an InputError.
	Option func(name string) string
}

// Words is err's message, an InputError's options named by e.Option.
func (e *Env) Words(err error) string {
	if e.Option == nil {
		return err.Error()
	}
	return Words(err, e.Option)
}

// SourceDir is the user's source tree dir, "" meaning the current
// directory.
func SourceDir(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// sayMu keeps the lines of Say whole, and a Stderr that is no file
// (a test's buffer) safe, when steps run at once (a bisection's probes
// on a fleet).
var sayMu sync.Mutex

// Say prints one line of the program's commentary to Stderr; it may be
// called from several goroutines.
func (e *Env) Say(format string, args ...any) {
	line := fmt.Sprintf(e.Name+": "+format+"\n", args...)
	sayMu.Lock()
	defer sayMu.Unlock()
	io.WriteString(e.stderr(), line)
}

func (e *Env) stderr() io.Writer {
	if e.Stderr == nil {
		return os.Stderr
	}
	return e.Stderr
}

// LocalHost is the host the command runs on.
func (e *Env) LocalHost() *hostcheck.Host {
	if e.Host != nil {
		return e.Host()
	}
	return hostcheck.Local(report.Version, hostcheck.Probe)
}

// SelfExecutable is the binary that forks re-execute.
func (e *Env) SelfExecutable() (string, error) {
	if e.Executable != "" {
		return e.Executable, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", FailedError{Msg: err.Error()}
	}
	return exe, nil
}
