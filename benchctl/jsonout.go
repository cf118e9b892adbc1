package benchctl

import (
	"encoding/json"
	"io"
)

// writeJSON writes v indented, one object.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
