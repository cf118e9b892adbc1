package result

import "strings"

// TrimProcs is a benchmark name without its GOMAXPROCS suffix ("-8"), as
// go test and benchfmt write it: the last "-" and the digits after it,
// when there are some and nothing else follows.
func TrimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 || strings.IndexFunc(name[i+1:], func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return name
	}
	return name[:i]
}
