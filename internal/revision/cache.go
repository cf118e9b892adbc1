package revision

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildCache keeps benchmark programs built at commits, by what decides
// the binary: the commit's tree hash (not the commit: a rebased or
// cherry-picked commit with the same tree is the same build), the
// program's place in it, and the toolchain and its settings (GOVERSION,
// GOOS, GOARCH, GOFLAGS, CGO_ENABLED, GOAMD64, GOEXPERIMENT). A bisection
// builds its ends once, and a later bisection over the same history
// builds nothing it built before.
//
// What the tree does not decide is never cached: the working tree, a
// build with another revision's declarations overlaid, a module that
// replaces a dependency with a directory outside its repository, and a
// go.work workspace.
type BuildCache struct {
	Dir string
}

// OpenCache is the build cache in dir, or nil (no caching) when dir is
// "" or "off".
func OpenCache(dir string) *BuildCache {
	if dir == "" || dir == "off" {
		return nil
	}
	return &BuildCache{Dir: dir}
}

// DefaultCacheDir is the build cache under the user's cache directory.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "ledgerbench", "builds"), nil
}

// key is the cache key of rev's program p in the tree at src (its
// module in modDir), and whether it may be cached.
func (c *BuildCache) key(repo *Repo, rev Revision, p *Program, src, modDir string) (string, bool) {
	if c == nil || c.Dir == "" || rev.Tree {
		return "", false
	}
	tree, err := repo.git("rev-parse", rev.Commit+"^{tree}")
	if err != nil {
		return "", false
	}
	cmd := exec.Command("go", "env", "GOVERSION", "GOOS", "GOARCH", "GOFLAGS", "CGO_ENABLED", "GOAMD64", "GOEXPERIMENT", "GOWORK")
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	env, err := cmd.Output()
	if err != nil {
		return "", false
	}
	lines := strings.Split(string(env), "\n")
	if len(lines) < 8 || lines[7] != "" && lines[7] != "off" {
		return "", false // a go.work brings in directories the tree does not hold
	}
	if !replacesInside(modDir, src) {
		return "", false
	}
	h := sha256.New()
	for _, s := range append([]string{"ledgerbench build v1", tree, p.ModuleRel, p.PkgRel}, lines[:7]...) {
		fmt.Fprintf(h, "%s\x00", s)
	}
	return hex.EncodeToString(h.Sum(nil))[:32], true
}

// replacesInside reports whether every directory replacement of the
// module in modDir stays inside the tree at src.
func replacesInside(modDir, src string) bool {
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		return false
	}
	var mod struct {
		Replace []struct {
			New struct{ Path, Version string }
		}
	}
	if json.Unmarshal(out, &mod) != nil {
		return false
	}
	for _, r := range mod.Replace {
		if r.New.Version != "" {
			continue // a module version: decided by go.sum, in the tree
		}
		dir := r.New.Path
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(modDir, dir)
		}
		if rel, err := filepath.Rel(src, dir); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return false
		}
	}
	return true
}

// get is the cached binary of key, if there is one.
func (c *BuildCache) get(key string) (string, bool) {
	bin := filepath.Join(c.Dir, key, "bench")
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o100 != 0 {
		return bin, true
	}
	return "", false
}

// put copies the binary built at bin into the cache under key, with a
// note of what it is, and returns the cached path. A copy that fails
// leaves nothing in the cache.
func (c *BuildCache) put(key, bin, what string) (string, error) {
	dir := filepath.Join(c.Dir, key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "bench-*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	src, err := os.Open(bin)
	if err != nil {
		tmp.Close()
		return "", err
	}
	_, err = io.Copy(tmp, src)
	src.Close()
	if err == nil {
		err = tmp.Chmod(0o755)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	_ = os.WriteFile(filepath.Join(dir, "what.txt"), []byte(what+"\n"), 0o644)
	final := filepath.Join(dir, "bench")
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", err
	}
	return final, nil
}
