package fork

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// EnvVar marks a process as a fork child; its value is the protocol
// version the parent speaks.
const EnvVar = "LEDGERBENCH_FORK"

// Child file descriptors: the parent passes two pipes as ExtraFiles.
const (
	toParentFD   = 3
	fromParentFD = 4
)

// IsChild reports whether this process was started as a fork child.
func IsChild() bool { return os.Getenv(EnvVar) != "" }

// Conn is the child's end of the link to its parent.
type Conn struct {
	in, out *os.File
}

// OpenChild opens the child's end of the link. It fails when the process
// was not started by a parent of this protocol version.
func OpenChild() (*Conn, error) {
	v := os.Getenv(EnvVar)
	if v != fmt.Sprint(Version) {
		return nil, fmt.Errorf("fork child: parent speaks protocol %q, this binary speaks %d", v, Version)
	}
	if _, err := unix.FcntlInt(toParentFD, unix.F_GETFD, 0); err != nil {
		return nil, errors.New("fork child: link file descriptors 3 and 4 are not open")
	}
	// Neither the link nor the marker is passed on to the processes a
	// benchmark starts: a helper holding fd 3 would keep the parent from
	// seeing the child exit, and one of this binary would take itself for
	// a fork.
	unix.CloseOnExec(toParentFD)
	unix.CloseOnExec(fromParentFD)
	os.Unsetenv(EnvVar)
	killGroupOnParentDeath()
	out := os.NewFile(toParentFD, "to-parent")
	in := os.NewFile(fromParentFD, "from-parent")
	if out == nil || in == nil {
		return nil, errors.New("fork child: link file descriptors 3 and 4 are not open")
	}
	return &Conn{in: in, out: out}, nil
}

// WatchParent calls gone, from a goroutine of its own, when the parent's
// end of the link closes before finished reports true: the parent died
// (or gave up on this child), and no one will read what it measures. The
// caller sends nothing more on the link after that.
func (c *Conn) WatchParent(finished func() bool, gone func()) {
	go func() {
		var b [1]byte
		for {
			if _, err := c.in.Read(b[:]); err != nil {
				if !finished() {
					gone()
				}
				return
			}
		}
	}()
}

// Send writes one frame to the parent.
func (c *Conn) Send(t Type, payload []byte) error {
	return Write(c.out, Frame{Type: t, Payload: payload})
}

// Receive reads one frame from the parent.
func (c *Conn) Receive() (Frame, error) { return Read(c.in) }

// Close closes both ends.
func (c *Conn) Close() error {
	return errors.Join(c.out.Close(), c.in.Close())
}

// parentDeathSignal is what a fork of this protocol receives when its
// parent dies (its Pdeathsig).
const parentDeathSignal = syscall.SIGTERM

// killGroupOnParentDeath makes the parent's death (or a SIGTERM) end the
// fork's whole process group, the helpers its benchmark started with it:
// a SIGKILL would end the fork alone, and they would run on beside the
// next run.
//
// A write to stdout or stderr, pipes to the parent, breaks when the
// parent is gone; Go's default would end this process alone on that
// SIGPIPE. It ends the group instead when the parent is gone (this
// process was reparented), and is otherwise only the write's EPIPE.
func killGroupOnParentDeath() {
	parent := os.Getppid()
	c := make(chan os.Signal, 1)
	signal.Notify(c, parentDeathSignal, syscall.SIGPIPE)
	go func() {
		for sig := range c {
			switch {
			case sig == parentDeathSignal:
				EndGroup(3, "benchctl child: terminated; the benchmark's helpers are killed with it")
			case os.Getppid() != parent:
				EndGroup(3, "") // stderr, a pipe to the parent that is gone, takes nothing
			}
		}
	}()
}

// EndGroup kills the other processes of the fork's process group, the
// helpers its benchmark started (a fork that leaves when its parent is
// gone must not leave them running), then says why on stderr and exits
// with code. The kill comes first: with the parent gone, a write to
// stderr, a pipe to it, may end this process (SIGPIPE).
func EndGroup(code int, why string) {
	self, group := os.Getpid(), syscall.Getpgrp()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if st, ok := readStat(pid); ok && st.pgrp == group {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if why != "" {
		fmt.Fprintln(os.Stderr, why)
	}
	os.Exit(code)
}
