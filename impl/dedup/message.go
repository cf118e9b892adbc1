package dedup

import (
	"errors"
	"fmt"
	"strings"
)

// Status is the answer of IsDuplicate.
type Status int

const (
	// Unknown: the sequence was pushed but not yet persisted; the producer
	// must retry later.
	Unknown Status = iota
	// NotDup: the message is new and was admitted.
	NotDup
	// Dup: the message was already persisted; the broker acknowledges it
	// without storing it again.
	Dup
)

func (s Status) String() string {
	switch s {
	case NotDup:
		return "NotDup"
	case Dup:
		return "Dup"
	}
	return "Unknown"
}

// Position is a (ledger, entry) position in the topic's log. Positions
// order by ledger, then entry.
type Position struct {
	Ledger, Entry int64
}

// Before reports whether p orders before q.
func (p Position) Before(q Position) bool {
	return p.Ledger < q.Ledger || (p.Ledger == q.Ledger && p.Entry < q.Entry)
}

// NoPosition is the position before every entry.
var NoPosition = Position{-1, -1}

// DefaultReplicatorPrefix starts the names of replicator producers.
const DefaultReplicatorPrefix = "pulsar.repl"

// Message is what the broker knows about one published message (Pulsar's
// PublishContext and message metadata).
type Message struct {
	ProducerName string
	SequenceID   int64
	// HighestSequenceID is the last sequence of a batch (0 or less than
	// SequenceID for a single message).
	HighestSequenceID int64
	// ChunkID is the chunk's index, -1 when the message is not chunked;
	// NumChunks is the number of chunks of the message.
	ChunkID   int
	NumChunks int
	// Marker messages are never duplicates.
	Marker bool
	// Replicated messages (ProducerName has the replicator prefix) carry
	// the original producer's name and sequences (protocol v1) or, when
	// ReplByPosition is set, the source position (protocol v2).
	OriginalProducerName      string
	OriginalSequenceID        int64
	OriginalHighestSequenceID int64
	ReplByPosition            bool
	ReplPosition              Position
}

// ErrInvalid is wrapped by every error about a malformed message.
var ErrInvalid = errors.New("invalid message")

func (m *Message) chunked() bool { return m.ChunkID != -1 }

// lastChunk reports whether m is unchunked or the last chunk.
func (m *Message) lastChunk() bool { return !m.chunked() || m.ChunkID == m.NumChunks-1 }

func (m *Message) validate(replicatorPrefix string) error {
	if m.ProducerName == "" {
		return fmt.Errorf("%w: empty producer name", ErrInvalid)
	}
	if m.chunked() && (m.ChunkID < 0 || m.NumChunks <= 0 || m.ChunkID >= m.NumChunks) {
		return fmt.Errorf("%w: producer %s: chunk %d of %d", ErrInvalid, m.ProducerName, m.ChunkID, m.NumChunks)
	}
	if m.Marker {
		return nil
	}
	if m.replicated(replicatorPrefix) {
		if m.ReplByPosition {
			if m.ReplPosition.Ledger < 0 || m.ReplPosition.Entry < 0 {
				return fmt.Errorf("%w: replicated message from %s without a source position", ErrInvalid, m.ProducerName)
			}
			return nil
		}
		if m.OriginalProducerName == "" || m.OriginalSequenceID < 0 {
			return fmt.Errorf("%w: replicated message from %s without its original producer and sequence", ErrInvalid, m.ProducerName)
		}
		return nil
	}
	if m.SequenceID < 0 {
		return fmt.Errorf("%w: producer %s: negative sequence ID %d", ErrInvalid, m.ProducerName, m.SequenceID)
	}
	return nil
}

func (m *Message) replicated(prefix string) bool { return strings.HasPrefix(m.ProducerName, prefix) }

// key returns the producer name, sequence and highest sequence that
// deduplicate m (the original producer's for a v1 replicated message).
func (m *Message) key(prefix string) (name string, seq, highest int64) {
	if m.replicated(prefix) {
		return m.OriginalProducerName, m.OriginalSequenceID, max(m.OriginalHighestSequenceID, m.OriginalSequenceID)
	}
	return m.ProducerName, m.SequenceID, max(m.HighestSequenceID, m.SequenceID)
}
