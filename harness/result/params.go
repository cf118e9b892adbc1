package result

import "strings"

// ParamValue is one parameter bound to one value.
type ParamValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Params is one point of a benchmark's parameter space, in declaration order.
type Params []ParamValue

// Get returns the value of the named parameter and whether it is set.
func (ps Params) Get(name string) (string, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// Suffix is the benchfmt name suffix "/a=1/b=x" of the point.
func (ps Params) Suffix() string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("/")
		b.WriteString(p.Name)
		b.WriteString("=")
		b.WriteString(p.Value)
	}
	return b.String()
}
