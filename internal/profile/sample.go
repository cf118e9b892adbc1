package profile

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
)

// SamplePeriod is the CPU time between two samples of `perf record`'s
// cpu-clock event (100 µs: 10,000 samples a CPU-second). The event is a
// high-resolution timer, so it is not held to the kernel's tick as the
// CPU-time timer runtime/pprof uses is (at most 250 samples a second on a
// kernel of 250 Hz, 100 by default): the same window gives 40 to 100
// times as many samples.
const SamplePeriod = 100_000

// sampleEvent is the event perf samples: the task's CPU clock, user
// mode only (perf_event_paranoid 2 lets a user sample its own programs).
const sampleEvent = "cpu-clock:u"

var sampleCheck struct {
	once sync.Once
	ok   bool
	why  string
}

// SampleStatus reports whether `perf record` can sample the CPU clock
// here, and if not, why. It asks perf once per process.
func SampleStatus() (bool, string) {
	c := &sampleCheck
	c.once.Do(func() {
		perf, err := exec.LookPath("perf")
		if err != nil {
			c.why = "perf is not installed (Debian package linux-perf)"
			return
		}
		dir, err := os.MkdirTemp("", "benchctl-perf")
		if err != nil {
			c.why = err.Error()
			return
		}
		defer os.RemoveAll(dir)
		out, err := exec.Command(perf, append(recordArgs(filepath.Join(dir, "perf.data")), "--", "true")...).CombinedOutput()
		if err != nil {
			c.why = fmt.Sprintf("perf record cannot sample %s here (perf_event_paranoid, or a container without perf events): %s", sampleEvent, strings.TrimSpace(firstLine(string(out))))
			return
		}
		c.ok, c.why = true, "available"
	})
	return c.ok, c.why
}

// TestLoop are the functions of a go test binary a sample of a
// benchmark is inside: the one that runs the benchmark's function at a
// b.N, and its callers, for a benchmark function that keeps no frame
// pointer (the frame-pointer walk then skips runN itself).
var TestLoop = []string{"testing.(*B).runN", "testing.(*B).run1.func1", "testing.(*B).launch"}

// Sampleable reports whether exe's CPU profile can be sampled by perf:
// perf can sample here, and exe's symbol table names within[0]
// (CountedLoop's or TestLoop's), which a sample must be inside (go run
// and go test strip their binaries; a stripped program's samples could
// name nothing).
func Sampleable(exe string, within ...string) bool {
	ok, _ := SampleStatus()
	return ok && len(within) > 0 && hasSymbol(exe, within[0]) == nil
}

// SampleWrap returns the command that runs a program (its path and
// arguments follow) under perf record sampling the CPU clock, as
// SampleCommand's, for the whole process (a go test binary, whose samples
// are then kept inside TestLoop), and the file perf writes in dir.
func SampleWrap(dir string) (wrap []string, out string, err error) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return nil, "", errors.New("unavailable: perf is not installed")
	}
	out = filepath.Join(dir, sampleFile)
	return append(append([]string{perf}, recordArgs(out)...), "--"), out, nil
}

// sampleFile is the file perf record writes in a fork's profile
// directory.
const sampleFile = "perf.data"

// SampleCommand returns the command that runs exe under `perf record`,
// sampling the CPU clock every SamplePeriod with each sample's call
// stack (Go keeps frame pointers), its events disabled until the fork
// enables them through the control FIFO (created in dir) around its
// measured iteration, the environment that tells the fork where the FIFOs
// are, and the file perf writes.
func SampleCommand(exe, dir string, args ...string) (path string, argv, env []string, out string, err error) {
	perf, control, env, err := perfControlled(dir)
	if err != nil {
		return "", nil, nil, "", err
	}
	out = filepath.Join(dir, sampleFile)
	argv = append(append(append(recordArgs(out), control...), "--", exe), args...)
	return perf, argv, env, out, nil
}

// recordArgs are perf record's arguments that sample into out: without
// reading build IDs or copying the program into perf's cache (~/.debug:
// every fork's would stay there), and without the BPF programs' events,
// whose synthesis costs perf a second at its start.
func recordArgs(out string) []string {
	return []string{"record", "-q", "-e", sampleEvent, "-c", strconv.Itoa(SamplePeriod), "-g",
		"--no-buildid", "--no-buildid-cache", "--no-bpf-event", "-o", out}
}

// ReadSamples converts perf record's samples in data, of a run of exe, to
// a CPU profile as runtime/pprof writes one (sample types samples/count
// and cpu/nanoseconds), keeping the samples whose stack passes through
// one of within (functions' full names; none keeps all). Each address of exe is
// named by the functions whose code it is, inlined ones included, from
// exe's DWARF (ReadInlining), else by perf's symbol; frames of other
// objects (the vDSO, libc) by perf's symbol and object. A stack is perf's
// walk of the frame pointers: a leaf that keeps no frame (Go gives a
// small leaf none) hides its caller from the sample's stack, so flat
// times are exact, and a caller's cumulative time misses the samples of
// its frameless leaves.
func ReadSamples(data, exe string, within ...string) (*profile.Profile, error) {
	cmd := exec.Command("perf", "script", "-i", data, "-F", "period,ip,sym,symoff,dso")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	text, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("perf script %s: %v: %s", data, err, strings.TrimSpace(firstLine(stderr.String())))
	}
	r, err := newSampleReader(exe)
	if err != nil {
		return nil, err
	}
	if err := r.read(text, within); err != nil {
		return nil, fmt.Errorf("%s: %w", data, err)
	}
	return r.p, nil
}

// inlinings are the programs' inlining ReadSamples read, by path, size
// and modification time (the last few programs): a side's profiling forks
// run one program, and reading its DWARF costs a third of a second.
var inlinings struct {
	sync.Mutex
	m map[string]*Inlining
}

// cachedInlining is ReadInlining's, read once per program.
func cachedInlining(exe string) (*Inlining, error) {
	fi, err := os.Stat(exe)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", exe, fi.Size(), fi.ModTime().UnixNano())
	inlinings.Lock()
	defer inlinings.Unlock()
	if in, ok := inlinings.m[key]; ok {
		return in, nil
	}
	in, err := ReadInlining(exe)
	if err != nil && !errors.Is(err, ErrNoDWARF) {
		return nil, err
	}
	if len(inlinings.m) >= 8 { // a bisection's programs come and go
		inlinings.m = nil
	}
	if inlinings.m == nil {
		inlinings.m = map[string]*Inlining{}
	}
	inlinings.m[key] = in
	return in, err
}

// sampleReader builds a profile from perf script's text.
type sampleReader struct {
	exe   string
	segs  []elf.ProgHeader // exe's loadable segments: file offsets to addresses
	inl   *Inlining        // nil without DWARF
	p     *profile.Profile
	locs  map[string]*profile.Location
	funcs map[string]*profile.Function
	objs  map[string]bool // perf's object paths: whether each is exe
}

func newSampleReader(exe string) (*sampleReader, error) {
	f, err := elf.Open(exe)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &sampleReader{exe: exe, locs: map[string]*profile.Location{}, funcs: map[string]*profile.Function{}, objs: map[string]bool{}}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			r.segs = append(r.segs, p.ProgHeader)
		}
	}
	if r.inl, err = cachedInlining(exe); err != nil && !errors.Is(err, ErrNoDWARF) {
		return nil, err
	}
	r.p = &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     SamplePeriod,
	}
	return r, nil
}

// read parses perf script's samples: a line with the sample's period,
// then one indented line per frame, leaf first ("offset sym+0xoff
// (object)"), then a blank line.
func (r *sampleReader) read(text []byte, within []string) error {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var period int64 = -1
	var stack []*profile.Location
	inside := len(within) == 0
	flush := func() {
		if period >= 0 && len(stack) > 0 && inside {
			r.p.Sample = append(r.p.Sample, &profile.Sample{Location: stack, Value: []int64{1, period}})
		}
		period, stack, inside = -1, nil, len(within) == 0
	}
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case !strings.HasPrefix(line, "\t"):
			flush()
			v, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
			if err != nil {
				return fmt.Errorf("line %d: want a sample's period, got %q", n, line)
			}
			period = v
		default:
			loc, err := r.frame(strings.TrimSpace(line), len(stack) == 0)
			if err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			stack = append(stack, loc)
			for _, l := range loc.Line {
				inside = inside || slices.Contains(within, l.Function.Name)
			}
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return err
	}
	if len(r.p.Sample) == 0 {
		return fmt.Errorf("no sample inside %s", strings.Join(within, " or "))
	}
	for i, l := range r.p.Location {
		l.ID = uint64(i + 1)
	}
	for i, f := range r.p.Function {
		f.ID = uint64(i + 1)
	}
	return r.p.CheckValid()
}

// frame is the location of one frame line, leaf or a caller's. A
// caller's address is its return address, the instruction after the
// call, which may belong to another line or inlined function: it is
// named by the call's last byte, as pprof names callers.
func (r *sampleReader) frame(line string, leaf bool) (*profile.Location, error) {
	hex, rest, _ := strings.Cut(line, " ")
	off, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return nil, fmt.Errorf("want a frame's address, got %q", line)
	}
	sym, obj := rest, ""
	if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
		sym, obj = rest[:i], rest[i+2:len(rest)-1]
	}
	if j := strings.LastIndex(sym, "+0x"); j > 0 {
		sym = sym[:j]
	}
	if !leaf && off > 0 {
		off--
	}
	key := fmt.Sprintf("%s\x00%x", obj, off)
	if loc := r.locs[key]; loc != nil {
		return loc, nil
	}
	loc := &profile.Location{}
	var names []string
	if r.sameFile(obj) {
		if addr, ok := r.address(off); ok {
			loc.Address = addr
			if r.inl != nil {
				names = r.inl.Frames(addr)
			}
		}
	} else if sym != "[unknown]" {
		sym = fmt.Sprintf("%s (%s)", sym, filepath.Base(obj))
	}
	if len(names) == 0 {
		names = []string{sym}
	}
	for _, n := range names {
		loc.Line = append(loc.Line, profile.Line{Function: r.function(n)})
	}
	r.locs[key] = loc
	r.p.Location = append(r.p.Location, loc)
	return loc, nil
}

// sameFile reports whether perf's object path is the executable read.
func (r *sampleReader) sameFile(obj string) bool {
	same, ok := r.objs[obj]
	if !ok {
		a, err1 := os.Stat(obj)
		b, err2 := os.Stat(r.exe)
		same = obj == r.exe || err1 == nil && err2 == nil && os.SameFile(a, b)
		r.objs[obj] = same
	}
	return same
}

// address is the virtual address of exe's file offset off: perf prints a
// frame of a mapped object at its offset in the file.
func (r *sampleReader) address(off uint64) (uint64, bool) {
	for _, s := range r.segs {
		if off >= s.Off && off < s.Off+s.Filesz {
			return off - s.Off + s.Vaddr, true
		}
	}
	return 0, false
}

func (r *sampleReader) function(name string) *profile.Function {
	if f := r.funcs[name]; f != nil {
		return f
	}
	f := &profile.Function{Name: name, SystemName: name}
	r.funcs[name] = f
	r.p.Function = append(r.p.Function, f)
	return f
}
