package payload

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// TokenEnv is the environment variable a client reads its upload token
// from.
const TokenEnv = "BENCHCTL_TOKEN"

// MaxUpload is the default limit of an upload's body on the server, and
// the most a client reads of a file to upload.
const MaxUpload = 32 << 20

// Configuration keys of a bisection's file (what nightly --bisect uploads
// of a bisection): the regression it bisected and what it found. A
// store records a file that carries KeyBisectBad as a bisection, not as
// a run.
const (
	KeyBisectBenchmark = "bisect-benchmark"
	KeyBisectUnit      = "bisect-unit"
	KeyBisectGood      = "bisect-good"
	KeyBisectBad       = "bisect-bad"
	KeyBisectCulprit   = "bisect-culprit"
	KeyBisectSubject   = "bisect-subject"
	KeyBisectOwn       = "bisect-own"       // its change against its parent, with its interval
	KeyBisectShare     = "bisect-share"     // the part of the whole change it explains
	KeyBisectFunctions = "bisect-functions" // the functions behind its own change, as its report's line names them
)

// File is one benchfmt file of an upload.
type File struct {
	Name string
	Data []byte
}

// HashFiles is the content hash of an upload's files: their names and
// bytes, in order.
func HashFiles(files []File) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%d:%s\x00%d\x00", len(f.Name), f.Name, len(f.Data))
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// UploadID is the ID an upload of files gets: a prefix of its content
// hash, so a client knows it before the server answers.
func UploadID(files []File) string { return HashFiles(files)[:16] }
