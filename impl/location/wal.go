package location

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
)

// The write-ahead log holds the batches applied since the memtable was
// last flushed. A record is
//
//	uint32 LE payload length, uint32 LE CRC-32C of the payload, payload
//	payload: (uvarint key length, key, uvarint value length, value)…
//
// Replay drops a torn tail and refuses damage in the middle (replayWAL).

type wal struct {
	f   *os.File
	w   *bufio.Writer
	num uint64
	buf []byte
}

func createWAL(dir string, num uint64) (*wal, error) {
	f, err := os.OpenFile(logName(dir, num), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &wal{f: f, w: bufio.NewWriterSize(f, 256<<10), num: num}, nil
}

func (l *wal) append(keys, values [][]byte, sync bool) error {
	p := l.buf[:0]
	for i := range keys {
		p = binary.AppendUvarint(p, uint64(len(keys[i])))
		p = append(p, keys[i]...)
		p = binary.AppendUvarint(p, uint64(len(values[i])))
		p = append(p, values[i]...)
	}
	l.buf = p
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:], uint32(len(p)))
	binary.LittleEndian.PutUint32(hdr[4:], crc32.Checksum(p, castagnoli))
	if _, err := l.w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := l.w.Write(p); err != nil {
		return err
	}
	if err := l.w.Flush(); err != nil {
		return err
	}
	if sync {
		return l.f.Sync()
	}
	return nil
}

func (l *wal) close() error {
	err := l.w.Flush()
	if e := l.f.Close(); err == nil {
		err = e
	}
	return err
}

// replayWAL calls apply for every intact record of the log. A bad record
// (short, oversized or failing its checksum) is a torn tail, dropped, when
// no intact record follows it: a batch torn by a crash was never
// acknowledged. When an intact record follows, the damage is in the middle
// of the log (a flipped bit, not a crash), the records after it were
// acknowledged, and replay fails with ErrCorrupt instead of cutting the
// log short: the distinction of RocksDB's kTolerateCorruptedTailRecords.
func replayWAL(path string, apply func(key, value []byte) error) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for off := 0; off < len(b); {
		p, ok := recordAt(b, off, math.MaxInt)
		if !ok {
			switch next, found, undecided := nextRecord(b, off); {
			case found:
				return fmt.Errorf("%w: log %s: bad record at offset %d, intact records from offset %d: damage in the middle of the log, not a torn tail", ErrCorrupt, path, off, next)
			case undecided:
				return fmt.Errorf("%w: log %s: bad record at offset %d, and the %d bytes after it could not be ruled out as intact records: not dropped as a torn tail", ErrCorrupt, path, off, len(b)-off)
			}
			return nil // a torn tail
		}
		off += walHeader + len(p)
		for len(p) > 0 {
			kl, a := binary.Uvarint(p)
			if a <= 0 || uint64(len(p)-a) < kl {
				return fmt.Errorf("%w: log %s: malformed record", ErrCorrupt, path)
			}
			k := p[a : a+int(kl)]
			p = p[a+int(kl):]
			vl, c := binary.Uvarint(p)
			if c <= 0 || uint64(len(p)-c) < vl {
				return fmt.Errorf("%w: log %s: malformed record", ErrCorrupt, path)
			}
			v := p[c : c+int(vl)]
			p = p[c+int(vl):]
			if err := apply(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

const walHeader = 8

// recordAt returns the payload of the intact record at off whose payload
// is at most limit bytes.
func recordAt(b []byte, off, limit int) ([]byte, bool) {
	if len(b)-off < walHeader {
		return nil, false
	}
	n := binary.LittleEndian.Uint32(b[off:])
	if n == 0 || uint64(n) > uint64(len(b)-off-walHeader) || uint64(n) > uint64(limit) {
		return nil, false
	}
	p := b[off+walHeader : off+walHeader+int(n)]
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(b[off+4:]) {
		return nil, false
	}
	return p, true
}

// nextRecord looks for an intact record after the bad one at bad. When
// the bad record's length is intact (damage in its payload), the next
// record starts right after it. Otherwise it scans every offset to the
// end of the log: a flipped length can hide a record of any size, and a
// torn tail, which only a crash leaves, is never followed by an intact
// record. An offset is a candidate only when its length fits in the rest
// of the log; the checksums of the candidates are bounded by a budget
// proportional to the rest, and a scan that spends it is undecided
// (replay then refuses the log rather than drop what may be acknowledged
// records).
func nextRecord(b []byte, bad int) (next int, found, undecided bool) {
	if len(b)-bad >= walHeader {
		if next := bad + walHeader + int(binary.LittleEndian.Uint32(b[bad:])); next < len(b) {
			if _, ok := recordAt(b, next, math.MaxInt); ok {
				return next, true, false
			}
		}
	}
	budget := walScanBudget*(len(b)-bad) + walScanSlack
	for off := bad + 1; off+walHeader < len(b); off++ {
		n := binary.LittleEndian.Uint32(b[off:])
		if n == 0 || uint64(n) > uint64(len(b)-off-walHeader) {
			continue
		}
		if budget -= int(n); budget < 0 {
			return 0, false, true
		}
		if _, ok := recordAt(b, off, math.MaxInt); ok {
			return off, true, false
		}
	}
	return 0, false, false
}

// walScanBudget and walScanSlack bound the checksum work of a scan for an
// intact record: walScanBudget times the bytes scanned, plus the slack.
const (
	walScanBudget = 64
	walScanSlack  = 1 << 20
)
