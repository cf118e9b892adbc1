package payload

import "testing"

// The ID depends on every name and byte and on their order, and not on
// where one file ends and the next begins being ambiguous.
func TestUploadIDSeparatesFiles(t *testing.T) {
	a := []File{{Name: "a", Data: []byte("xy")}, {Name: "b", Data: []byte("z")}}
	ids := map[string]string{"a": UploadID(a)}
	for name, files := range map[string][]File{
		"swapped":       {a[1], a[0]},
		"moved byte":    {{Name: "a", Data: []byte("x")}, {Name: "b", Data: []byte("yz")}},
		"renamed":       {{Name: "c", Data: []byte("xy")}, a[1]},
		"one file":      {{Name: "a", Data: []byte("xyz")}},
		"name in bytes": {{Name: "ax", Data: []byte("y")}, a[1]},
	} {
		id := UploadID(files)
		for other, o := range ids {
			if id == o {
				t.Errorf("%s and %s share the ID %s", name, other, id)
			}
		}
		ids[name] = id
	}
	if len(ids["a"]) != 16 || UploadID(a) != ids["a"] {
		t.Errorf("ID %q: want 16 hex digits, the same every time", ids["a"])
	}
}
