package location

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
)

// The write-ahead log holds the batches applied since the memtable was
// last flushed. A record is
//
//	uint32 LE payload length, uint32 LE CRC-32C of the payload, payload
//	payload: (uvarint key length, key, uvarint value length, value)…
//
// Replay stops at the first short or mismatching record: a batch torn by a
// crash was never acknowledged.

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

// replayWAL calls apply for every intact record of the log.
func replayWAL(path string, apply func(key, value []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil // end, or a torn header
		}
		n := binary.LittleEndian.Uint32(hdr[:])
		if n > 1<<30 {
			return nil
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(r, p); err != nil {
			return nil
		}
		if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
			return nil
		}
		for len(p) > 0 {
			kl, a := binary.Uvarint(p)
			if a <= 0 || uint64(len(p)-a) < kl {
				return errors.New("malformed log record")
			}
			k := p[a : a+int(kl)]
			p = p[a+int(kl):]
			vl, b := binary.Uvarint(p)
			if b <= 0 || uint64(len(p)-b) < vl {
				return errors.New("malformed log record")
			}
			v := p[b : b+int(vl)]
			p = p[b+int(vl):]
			if err := apply(k, v); err != nil {
				return err
			}
		}
	}
}
