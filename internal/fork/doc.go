// Package fork is the link between the benchmark runner and its worker
// processes: the same binary re-executed with [EnvVar] set.
//
// The parent passes two pipes as extra files: the child writes frames to
// fd 3 and reads frames from fd 4. The child's stdout and stderr are logs
// only, so stray output never corrupts a result. The conversation is
//
//	child → hello, parent → plan, child → iteration × n, child → done | error
//
// Frames are versioned and length-delimited (see [Frame]); payloads are
// JSON owned by the harness package. A child that exits, crashes or hangs
// shows up at the parent as io.EOF, io.ErrUnexpectedEOF or [ErrTimeout] from
// [Process.Next], and the parent reports it with [Process.StderrTail].
//
// Read never panics on any input; a malformed header wraps [ErrCorrupt].
// A Process is used by one goroutine; Conn likewise.
package fork
