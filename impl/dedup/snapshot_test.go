package dedup

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func sampleSnapshot() *Snapshot {
	return &Snapshot{
		Position:      Position{3, 41},
		Sequences:     map[string]int64{"a": 10, "producer-1": 1 << 40, "z": 0},
		ReplPositions: map[string]Position{"pulsar.repl.east": {7, 8}},
	}
}

func TestSnapshotEncodingRoundTrip(t *testing.T) {
	b, err := sampleSnapshot().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Snapshot
	if err := got.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(&got, sampleSnapshot()) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for i := range b { // any flipped byte is detected
		c := append([]byte(nil), b...)
		c[i] ^= 0x40
		if err := new(Snapshot).UnmarshalBinary(c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: err = %v, want ErrCorrupt", i, err)
		}
	}
	for n := 0; n < len(b); n++ {
		if err := new(Snapshot).UnmarshalBinary(b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: err = %v", n, err)
		}
	}
}

func FuzzSnapshotDecode(f *testing.F) {
	b, _ := sampleSnapshot().MarshalBinary()
	f.Add(b)
	f.Add([]byte("LBDS"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Snapshot
		if err := s.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var s2 Snapshot
		if err := s2.UnmarshalBinary(again); err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("re-encoding does not round-trip: %v", err)
		}
	})
}

func TestFileStoreCrashBetweenWriteAndRename(t *testing.T) {
	dir := t.TempDir()
	store := &FileStore{Dir: dir}
	old := sampleSnapshot()
	if err := store.Save(old); err != nil {
		t.Fatal(err)
	}
	crash := errors.New("crash")
	store.beforeRename = func() error { return crash }
	newer := sampleSnapshot()
	newer.Position = Position{9, 9}
	if err := store.Save(newer); !errors.Is(err, crash) {
		t.Fatalf("Save = %v", err)
	}
	got, skipped, err := (&FileStore{Dir: dir}).Load()
	if err != nil || len(skipped) != 0 || got.Position != old.Position {
		t.Fatalf("after a crash before the rename: %+v, %v, %v; want the old snapshot", got, skipped, err)
	}
	// A crash after the first rename (snapshot moved to snapshot.prev, the
	// new one not yet in place) also leaves a valid snapshot.
	if err := os.Rename(filepath.Join(dir, snapName), filepath.Join(dir, prevName)); err != nil {
		t.Fatal(err)
	}
	got, _, err = (&FileStore{Dir: dir}).Load()
	if err != nil || got.Position != old.Position {
		t.Fatalf("with only snapshot.prev: %+v, %v", got, err)
	}
}

func TestRecoveryFromSnapshotAndLog(t *testing.T) {
	forEach(t, func(t *testing.T, newA func() Admission) {
		dir := t.TempDir()
		log := &MemLog{}
		d := New(newA(), Config{SnapshotInterval: 3, Store: &FileStore{Dir: dir}})
		publish := func(d *Deduplicator, m *Message) {
			t.Helper()
			if st, err := d.IsDuplicate(m); st != NotDup || err != nil {
				t.Fatalf("publish %s/%d: %v %v", m.ProducerName, m.SequenceID, st, err)
			}
			pos := log.Append(*m)
			if err := d.RecordPersisted(m, pos); err != nil {
				t.Fatal(err)
			}
		}
		for s := int64(1); s <= 4; s++ {
			publish(d, msg("a", s))
		}
		publish(d, &Message{ProducerName: "b", SequenceID: 1, HighestSequenceID: 9, ChunkID: -1})
		publish(d, &Message{ProducerName: "pulsar.repl.east", ChunkID: -1, ReplByPosition: true, ReplPosition: Position{4, 4}})
		publish(d, msg("c", 5)) // after the second snapshot (taken at entry 5)

		// A new broker recovers from the snapshot plus the log tail.
		r := New(newA(), Config{SnapshotInterval: 3, Store: &FileStore{Dir: dir}})
		rec, err := r.Recover(log)
		if err != nil {
			t.Fatal(err)
		}
		if rec.From != (Position{1, 5}) || rec.Replayed != 1 || len(rec.Skipped) != 0 {
			t.Fatalf("recovery %+v: want replay after entry 5 of 1 entry", rec)
		}
		mustStatus(t, r, msg("a", 4), Dup)
		mustStatus(t, r, msg("b", 9), Dup)
		mustStatus(t, r, msg("c", 5), Dup)
		mustStatus(t, r, msg("a", 5), NotDup)
		mustStatus(t, r, &Message{ProducerName: "pulsar.repl.east", ChunkID: -1, ReplByPosition: true, ReplPosition: Position{4, 4}}, Dup)

		// A corrupt newest snapshot is reported and the previous one used.
		cur := filepath.Join(dir, snapName)
		b, _ := os.ReadFile(cur)
		b[len(b)/2] ^= 1
		os.WriteFile(cur, b, 0o644)
		r2 := New(newA(), Config{Store: &FileStore{Dir: dir}})
		rec, err = r2.Recover(log)
		if err != nil || len(rec.Skipped) != 1 || !errors.Is(rec.Skipped[0], ErrCorrupt) || rec.From != (Position{1, 2}) || rec.Replayed != 4 {
			t.Fatalf("with a corrupt snapshot: %+v, %v; want the previous snapshot (after entry 2) and 4 replayed", rec, err)
		}
		mustStatus(t, r2, msg("c", 5), Dup)

		// Both corrupt: rebuild from the whole log.
		prev := filepath.Join(dir, prevName)
		os.WriteFile(prev, []byte("garbage"), 0o644)
		r3 := New(newA(), Config{Store: &FileStore{Dir: dir}})
		rec, err = r3.Recover(log)
		if err != nil || len(rec.Skipped) != 2 || rec.From != NoPosition || rec.Replayed != len(log.Entries) {
			t.Fatalf("with both corrupt: %+v, %v; want a rebuild from the start", rec, err)
		}
		mustStatus(t, r3, msg("a", 3), Dup)
		if p, _ := r3.Admission().Pushed("b"); p != 9 {
			t.Fatalf("recovered pushed of b = %d, want 9", p)
		}
	})
}
