package fork

import (
	"errors"
	"fmt"
	"os"
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
	out := os.NewFile(toParentFD, "to-parent")
	in := os.NewFile(fromParentFD, "from-parent")
	if out == nil || in == nil {
		return nil, errors.New("fork child: link file descriptors 3 and 4 are not open")
	}
	return &Conn{in: in, out: out}, nil
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
