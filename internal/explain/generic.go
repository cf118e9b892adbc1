package explain

import "strings"

// FuncName is a function's name as the explanations compare it: without
// the type arguments of a generic function or of its receiver's type
// ("btree.(*node[go.shape.interface { Less(btree.Item) bool }]).get" is
// "btree.(*node).get"). A function made generic between two revisions is
// then compared with itself, not reported gone beside a new one, and the
// instantiations of one generic function on one side are counted as one.
func FuncName(name string) string {
	if !strings.Contains(name, "[") {
		return name
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '[' && (depth > 0 || i > 0 && identByte(name[i-1])):
			depth++
		case c == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// identByte reports whether c may end a Go identifier (or a package
// path's element before it).
func identByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
