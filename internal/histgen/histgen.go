package histgen

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// Spec is a history to write.
type Spec struct {
	// Commits is the number of commits after the good end.
	Commits int
	// Changes multiply Work's rounds at their commits (1..Commits).
	Changes []Change
	// Broken commits do not compile.
	Broken []int
	// Rounds is Work's rounds at the good end (default 1000).
	Rounds int
	// Noise, when above 0, makes each process run Work's rounds times a
	// factor it draws once, uniform in [1-Noise, 1+Noise]: a benchmark
	// whose work varies from process to process (its memory layout, a
	// cache it warms) while no commit changes it.
	Noise float64
	// Harness is the root of this module's source, vendored into the
	// history.
	Harness string
	// Sources, when set, are work.go of the good end and of each commit
	// after it (Commits+1 of them), with Subjects their commit messages,
	// in place of Work's rounds: the history of a fixture of its own (see
	// ExplainFixture). Changes, Rounds and Noise are then unused.
	Sources, Subjects []string
	// Fleet makes the history's benchmark program a fleet's coordinator
	// and agent too (the package benchctl/fleet linked: ab and bisect
	// --fleet, the agent command).
	Fleet bool
}

// Change is a planted change: from commit At on, Work runs Factor times
// the rounds it ran before.
type Change struct {
	At     int
	Factor float64
}

// noisyWork is Work with a per-process factor (Spec.Noise) on its rounds.
const noisyWork = `package tiny

import "math/rand/v2"

// scale is this process's own factor on Work's rounds.
var scale = 1 + %g*(2*rand.Float64()-1)

// Work runs its rounds of a mixing step.
//
//go:noinline
func Work(x uint64) uint64 {
	n := int(float64(%d) * scale)
	for i := 0; i < n; i++ {
		x ^= x >> 29
		x *= 0xbf58476d1ce4e5b9
	}
	return x
}
`

// Work is the module's code under test.
const work = `package tiny

// Work runs its rounds of a mixing step.
//
//go:noinline
func Work(x uint64) uint64 {
	for i := 0; i < %d; i++ {
		x ^= x >> 29
		x *= 0xbf58476d1ce4e5b9
	}
	return x
}
`

const bench = `package bench

import (
	"tiny"

	"github.com/ledgerbench/ledgerbench/harness"
)

func init() {
	harness.Register(&harness.Benchmark{Family: "tiny", Name: "WorkLoop", Suites: []string{"history"}, Setup: func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) {
			x := uint64(3)
			return func() { x = tiny.Work(x); w.Sink(x) }, nil
		})
		return nil
	}})
}
`

// program is the history's benchmark program: its Config's fields and an
// import for them go in the two %s (none: benchctl.Main's).
const program = `package main

import (
	"os"

	"github.com/ledgerbench/ledgerbench/benchctl"%s
	_ "tiny/bench"
)

func main() { os.Exit(benchctl.Config{%s}.Main()) }
`

// Write writes the history into dir (a new git repository) and returns
// its commits, the good end first.
func Write(dir string, s Spec) ([]string, error) {
	if s.Rounds == 0 {
		s.Rounds = 1000
	}
	for _, c := range s.Changes {
		if c.At < 1 || c.At > s.Commits || !(c.Factor > 0) {
			return nil, fmt.Errorf("histgen: change %+v outside commits 1..%d", c, s.Commits)
		}
	}
	g := &gitter{dir: dir}
	g.run("init", "-q")
	prog, pkgs := fmt.Sprintf(program, "", ""), []string{"./benchctl"}
	if s.Fleet { // the program with the fleet's commands
		prog = fmt.Sprintf(program, "\n\t\"github.com/ledgerbench/ledgerbench/benchctl/fleet\"", "Commands: fleet.Commands")
		pkgs = append(pkgs, "./benchctl/fleet")
	}
	if err := vendor(s.Harness, filepath.Join(dir, "ledgerbench"), pkgs...); err != nil {
		return nil, err
	}
	gomod, err := os.ReadFile(filepath.Join(s.Harness, "go.mod"))
	if err != nil {
		return nil, err
	}
	mod := strings.Replace(string(gomod), "module github.com/ledgerbench/ledgerbench", "module tiny", 1)
	g.write("go.mod", mod+"\nrequire github.com/ledgerbench/ledgerbench v0.0.0\n\nreplace github.com/ledgerbench/ledgerbench => ./ledgerbench\n")
	g.copy(filepath.Join(s.Harness, "go.sum"), "go.sum")
	g.write("bench/bench.go", bench)
	g.write("cmd/bench/main.go", prog)
	if s.Sources != nil {
		return g.sources(s)
	}
	rounds := float64(s.Rounds)
	g.write("work.go", s.source(s.Rounds))
	g.run("add", ".")
	g.run("commit", "-q", "-m", fmt.Sprintf("good: Work of %d rounds", s.Rounds))
	commits := []string{g.run("rev-parse", "HEAD")}
	for i := 1; i <= s.Commits; i++ {
		subject := fmt.Sprintf("note %d", i)
		for _, c := range s.Changes {
			if c.At == i {
				rounds *= c.Factor
				subject = fmt.Sprintf("commit %d: Work of %d rounds (×%g)", i, int(math.Round(rounds)), c.Factor)
			}
		}
		src := s.source(int(math.Round(rounds)))
		for _, b := range s.Broken {
			if b == i {
				src += "\nfunc broken() { undefined() }\n"
				subject += ", does not build"
			}
		}
		g.write("work.go", src)
		g.write("notes.txt", subject+"\n")
		g.run("add", ".")
		g.run("commit", "-q", "-m", subject)
		commits = append(commits, g.run("rev-parse", "HEAD"))
	}
	return commits, g.err
}

// sources commits s.Sources, one commit each, and returns the commits.
func (g *gitter) sources(s Spec) ([]string, error) {
	if len(s.Sources) != s.Commits+1 || len(s.Subjects) != len(s.Sources) {
		return nil, fmt.Errorf("histgen: %d sources and %d subjects for %d commits after the good end", len(s.Sources), len(s.Subjects), s.Commits)
	}
	var commits []string
	for i, src := range s.Sources {
		g.write("work.go", src)
		g.write("notes.txt", s.Subjects[i]+"\n")
		g.run("add", ".")
		g.run("commit", "-q", "-m", s.Subjects[i])
		commits = append(commits, g.run("rev-parse", "HEAD"))
	}
	return commits, g.err
}

// source is work.go with Work of the given rounds.
func (s Spec) source(rounds int) string {
	if s.Noise > 0 {
		return fmt.Sprintf(noisyWork, s.Noise, rounds)
	}
	return fmt.Sprintf(work, rounds)
}

// gitter writes files and runs git in a repository, keeping the first
// error.
type gitter struct {
	dir string
	err error
}

func (g *gitter) run(args ...string) string {
	if g.err != nil {
		return ""
	}
	out, err := revision.Git(g.dir, append([]string{"-c", "user.name=histgen", "-c", "user.email=histgen@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	g.err = err
	return out
}

func (g *gitter) write(name, text string) {
	if g.err != nil {
		return
	}
	p := filepath.Join(g.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		g.err = err
		return
	}
	g.err = os.WriteFile(p, []byte(text), 0o644)
}

func (g *gitter) copy(from, name string) {
	b, err := os.ReadFile(from)
	if err != nil {
		g.err = err
		return
	}
	g.write(name, string(b))
}

// vendor copies the packages of root's module that pkgs link (their Go
// and assembly files, without tests), with go.mod and go.sum, into dst.
func vendor(root, dst string, pkgs ...string) error {
	cmd := exec.Command("go", append([]string{"list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}"}, pkgs...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("histgen: listing the harness's packages in %s: %v", root, err)
	}
	g := &gitter{dir: dst}
	g.copy(filepath.Join(root, "go.mod"), "go.mod")
	g.copy(filepath.Join(root, "go.sum"), "go.sum")
	for pkg := range strings.FieldsSeq(string(out)) {
		rel, err := filepath.Rel(root, pkg)
		if err != nil {
			return err
		}
		files, _ := filepath.Glob(filepath.Join(pkg, "*.go"))
		asm, _ := filepath.Glob(filepath.Join(pkg, "*.s"))
		for _, f := range append(files, asm...) {
			if !strings.HasSuffix(f, "_test.go") {
				g.copy(f, filepath.Join(rel, filepath.Base(f)))
			}
		}
	}
	return g.err
}
