package explain

import "testing"

func TestFuncNameDropsTypeArguments(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/google/btree.(*node[go.shape.interface { Less(github.com/google/btree.Item) bool }]).get":      "github.com/google/btree.(*node).get",
		"github.com/google/btree.items[go.shape.interface { Less(github.com/google/btree.Item) bool }].find.func1": "github.com/google/btree.items.find.func1",
		"slices.SortFunc[go.shape.[]uint8,go.shape.uint8]":                                                         "slices.SortFunc",
		"m.F[go.shape.map[string]int]": "m.F",
		"m.F[...]":                     "m.F",
		"runtime.mallocgc":             "runtime.mallocgc",
		"? 0x4010":                     "? 0x4010",
		"[weird]":                      "[weird]",
	} {
		if got := FuncName(in); got != want {
			t.Errorf("FuncName(%q) = %q, want %q", in, got, want)
		}
	}
}
