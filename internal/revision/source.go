package revision

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Source returns a reader of rev's source files, named as a program's
// debug information names them: absolute, or, built with -trimpath, by
// the module's path and the file's place in it ("tiny/work.go"). A name
// that is not absolute is looked up in rev (its commit, or the working
// tree) as it stands, then without its leading elements one by one, so a
// module at the repository's root or below it is found. A file outside
// the repository (the standard library's) is an error.
func (r *Repo) Source(rev Revision) func(file string) ([]byte, error) {
	return func(file string) ([]byte, error) {
		if filepath.IsAbs(file) {
			return os.ReadFile(file)
		}
		for p := strings.TrimPrefix(file, "./"); p != ""; {
			if rev.Tree {
				if b, err := os.ReadFile(filepath.Join(r.Root, p)); err == nil {
					return b, nil
				}
			} else if out, err := Git(r.Root, "show", rev.Commit+":"+p); err == nil {
				return []byte(out), nil
			}
			_, rest, ok := strings.Cut(p, "/")
			if !ok {
				break
			}
			p = rest
		}
		return nil, fmt.Errorf("%s is not in %s at %s", file, r.Root, Short(rev.Commit))
	}
}
