package gotest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Package is one Go package named by a pattern.
type Package struct {
	ImportPath string
	// Dir is the package's source directory: its test binary runs there,
	// as go test runs it, so testdata and relative paths work.
	Dir string
	// TestFiles are its _test.go files (in-package and external), by
	// name in Dir.
	TestFiles []string
}

type listed struct {
	ImportPath   string
	Dir          string
	TestGoFiles  []string
	XTestGoFiles []string
	Error        *struct{ Err string }
}

// Packages resolves patterns with go list in dir (the module whose graph
// names the packages). A pattern that matches no package, or a package
// that cannot be loaded, is an error naming it; the packages come in the
// patterns' order, each once.
func Packages(ctx context.Context, dir string, patterns []string) ([]Package, error) {
	var out []Package
	seen := map[string]bool{}
	var errs []error
	for _, pat := range patterns {
		if strings.HasPrefix(pat, "-") {
			errs = append(errs, fmt.Errorf("package pattern %q: must not start with -", pat))
			continue
		}
		pkgs, err := list(ctx, dir, pat)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range pkgs {
			if !seen[p.ImportPath] {
				seen[p.ImportPath] = true
				out = append(out, p)
			}
		}
	}
	return out, errors.Join(errs...)
}

func list(ctx context.Context, dir, pattern string) ([]Package, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-json=ImportPath,Dir,TestGoFiles,XTestGoFiles,Error", "--", pattern)
	cmd.Dir = dir
	cmd.Env = goEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	msg := strings.TrimSpace(stderr.String())
	if err != nil {
		return nil, fmt.Errorf("package pattern %s: go list: %v: %s", pattern, err, msg)
	}
	var out []Package
	var errs []error
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var l listed
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("package pattern %s: reading go list's output: %v", pattern, err)
		}
		if l.Error != nil {
			errs = append(errs, fmt.Errorf("package %s: %s", l.ImportPath, strings.TrimSpace(l.Error.Err)))
			continue
		}
		out = append(out, Package{ImportPath: l.ImportPath, Dir: l.Dir, TestFiles: append(l.TestGoFiles, l.XTestGoFiles...)})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(out) == 0 {
		if msg != "" {
			return nil, fmt.Errorf("package pattern %s matches no package (%s)", pattern, msg)
		}
		return nil, fmt.Errorf("package pattern %s matches no package", pattern)
	}
	return out, nil
}

// Build compiles p's test binary into bin with go test -c, from dir (the
// module whose graph and toolchain build it); overlay, when set, is a go
// build -overlay file. The error carries the compiler's output.
func Build(ctx context.Context, dir string, p Package, bin, overlay string) error {
	args := []string{"test", "-c", "-o", bin}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, p.ImportPath)...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("building the test binary of %s: %v\n%s", p.ImportPath, err, strings.TrimSpace(string(out)))
	}
	if _, err := os.Stat(bin); err != nil {
		// go test -c writes nothing for a package without test files.
		return fmt.Errorf("building the test binary of %s: go test -c wrote none (%s)", p.ImportPath, strings.TrimSpace(string(out)))
	}
	return nil
}

// goEnv is the environment of the go commands: the local toolchain, so
// both sides of an A/B comparison are built by the same one.
func goEnv() []string {
	return append(os.Environ(), "GOTOOLCHAIN=local")
}
