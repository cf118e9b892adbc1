package fork

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	frames := []Frame{{Hello, []byte(`{"pid":1}`)}, {Plan, nil}, {Iteration, bytes.Repeat([]byte("x"), 1<<16)}, {Done, []byte("{}")}, {Error, []byte(`{"message":"m"}`)}}
	for _, f := range frames {
		if err := Write(&buf, f); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range frames {
		got, err := Read(&buf)
		if err != nil || got.Type != want.Type || !bytes.Equal(got.Payload, want.Payload) {
			t.Fatalf("Read = %v %q…, %v; want %v", got.Type, firstBytes(got.Payload), err, want.Type)
		}
	}
	if _, err := Read(&buf); err != io.EOF {
		t.Fatalf("Read at the end = %v, want io.EOF", err)
	}
}

func firstBytes(b []byte) []byte { return b[:min(len(b), 16)] }

func TestFrameErrors(t *testing.T) {
	good := Frame{Iteration, []byte("payload")}.Append(nil)
	for _, tc := range []struct {
		name    string
		in      []byte
		corrupt bool
		eof     error
	}{
		{"truncated header", good[:5], false, io.ErrUnexpectedEOF},
		{"truncated payload", good[:len(good)-2], false, io.ErrUnexpectedEOF},
		{"bad magic", append([]byte("XX"), good[2:]...), true, nil},
		{"other version", append([]byte{'L', 'B', Version + 1}, good[3:]...), true, nil},
		{"unknown type", append([]byte{'L', 'B', Version, 9}, good[4:]...), true, nil},
		{"oversized", []byte{'L', 'B', Version, byte(Iteration), 0xff, 0xff, 0xff, 0xff}, true, nil},
	} {
		_, err := Read(bytes.NewReader(tc.in))
		if tc.corrupt && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", tc.name, err)
		}
		if tc.eof != nil && !errors.Is(err, tc.eof) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.eof)
		}
	}
	if err := Write(io.Discard, Frame{Iteration, make([]byte, MaxPayload+1)}); err == nil {
		t.Error("Write accepted an oversized payload")
	}
}

func FuzzFrame(f *testing.F) {
	f.Add(byte(Iteration), []byte(`{"index":1}`), []byte{})
	f.Add(byte(Hello), []byte{}, []byte("LB\x01\x03\x00\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, typ byte, payload, trailing []byte) {
		// Any input decodes to frames or an error, never a panic.
		r := bytes.NewReader(append(Frame{Type(typ), payload}.Append(nil), trailing...))
		first, err := Read(r)
		if Type(typ).valid() {
			if err != nil || first.Type != Type(typ) || !bytes.Equal(first.Payload, payload) {
				t.Fatalf("round trip of a valid frame: %v %v", first.Type, err)
			}
		} else if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("frame of type %d: err = %v, want ErrCorrupt", typ, err)
		}
		for err == nil {
			_, err = Read(r)
		}
		_, _ = Read(bytes.NewReader(trailing))
	})
}
