package fork

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Version is the protocol version carried in every frame header. A parent
// and a child of different versions refuse each other's frames.
const Version = 1

// MaxPayload bounds one frame's payload; a larger length is corruption.
const MaxPayload = 64 << 20

// Type is a frame's kind.
type Type byte

const (
	Hello     Type = 1 // child → parent: the child is up (payload: JSON hello)
	Plan      Type = 2 // parent → child: what to run (payload: JSON plan)
	Iteration Type = 3 // child → parent: one iteration's result
	Done      Type = 4 // child → parent: the trial ended cleanly
	Error     Type = 5 // child → parent: the trial failed (payload: JSON failure)
	// Ready and Go hold a duet in lockstep: a child whose plan asks for
	// it sends Ready when its setup is done and waits for Go,
	// which carries the schedule both sides' iterations keep.
	Ready Type = 6 // child → parent: set up, waiting to start
	Go    Type = 7 // parent → child: when to start (payload: JSON schedule)
)

func (t Type) String() string {
	switch t {
	case Hello:
		return "hello"
	case Plan:
		return "plan"
	case Iteration:
		return "iteration"
	case Done:
		return "done"
	case Error:
		return "error"
	case Ready:
		return "ready"
	case Go:
		return "go"
	}
	return fmt.Sprintf("type(%d)", byte(t))
}

func (t Type) valid() bool { return t >= Hello && t <= Go }

// Frame is one protocol message.
//
// On the wire:
//
//	+------+------+---------+------+----------------+-----------+
//	| 'L'  | 'B'  | version | type | length (u32 BE) | payload … |
//	+------+------+---------+------+----------------+-----------+
//	  1      1      1         1      4                 length
type Frame struct {
	Type    Type
	Payload []byte
}

const headerLen = 8

// ErrCorrupt is wrapped by every error about a malformed frame.
var ErrCorrupt = errors.New("corrupt frame")

// Append appends the encoding of f to dst.
func (f Frame) Append(dst []byte) []byte {
	dst = append(dst, 'L', 'B', Version, byte(f.Type))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(f.Payload)))
	return append(dst, f.Payload...)
}

// Write writes f as one write call, so frames from one writer never
// interleave.
func Write(w io.Writer, f Frame) error {
	if len(f.Payload) > MaxPayload {
		return fmt.Errorf("frame %s: payload of %d bytes exceeds %d", f.Type, len(f.Payload), MaxPayload)
	}
	_, err := w.Write(f.Append(nil))
	return err
}

// Read reads one frame. It returns io.EOF only at a clean frame boundary;
// a frame cut short is io.ErrUnexpectedEOF, and a bad header wraps
// ErrCorrupt.
func Read(r io.Reader) (Frame, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Frame{}, err
	}
	if h[0] != 'L' || h[1] != 'B' {
		return Frame{}, fmt.Errorf("%w: bad magic %q", ErrCorrupt, h[:2])
	}
	if h[2] != Version {
		return Frame{}, fmt.Errorf("%w: protocol version %d, want %d", ErrCorrupt, h[2], Version)
	}
	t := Type(h[3])
	if !t.valid() {
		return Frame{}, fmt.Errorf("%w: unknown frame type %d", ErrCorrupt, h[3])
	}
	n := binary.BigEndian.Uint32(h[4:])
	if n > MaxPayload {
		return Frame{}, fmt.Errorf("%w: %s payload length %d exceeds %d", ErrCorrupt, t, n, MaxPayload)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, fmt.Errorf("%s frame of %d bytes: %w", t, n, err)
	}
	return Frame{Type: t, Payload: p}, nil
}
