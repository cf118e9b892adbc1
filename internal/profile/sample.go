package profile

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
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
// exe's DWARF (ReadInlining), else by its symbol table; frames of other
// objects (the vDSO, libc) by their object. A stack is perf's
// walk of the frame pointers: a leaf that keeps no frame (Go gives a
// small leaf none) hides its caller from the sample's stack, so flat
// times are exact, and a caller's cumulative time misses the samples of
// its frameless leaves.
func ReadSamples(data, exe string, within ...string) (*profile.Profile, error) {
	// Without sym, perf does not read exe's symbols itself (a third of a
	// second for a 16 MB program, every fork): its frames are named here.
	cmd := exec.Command("perf", "script", "-i", data, "-F", "period,ip,dso")
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

// programs are the names of the programs ReadSamples read, by path, size
// and modification time (the last few programs): a side's profiling forks
// run one program, and reading its DWARF costs a third of a second.
var programs struct {
	sync.Mutex
	m map[string]*programNames
}

// programNames are a program's function names by address: its DWARF's
// inlining (nil without DWARF) and its symbol table.
type programNames struct {
	inl  *Inlining
	syms []elf.Symbol // functions, by address
}

// cachedNames are the names of exe, opened as f, read once per program.
func cachedNames(exe string, f *elf.File) (*programNames, error) {
	fi, err := os.Stat(exe)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", exe, fi.Size(), fi.ModTime().UnixNano())
	programs.Lock()
	defer programs.Unlock()
	if n, ok := programs.m[key]; ok {
		return n, nil
	}
	n := &programNames{}
	if n.inl, err = inliningOf(exe, f); err != nil && !errors.Is(err, ErrNoDWARF) {
		return nil, err
	}
	syms, _ := f.Symbols() // none: perf's frames of exe are named by address
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			n.syms = append(n.syms, s)
		}
	}
	slices.SortFunc(n.syms, func(a, b elf.Symbol) int { return cmp.Compare(a.Value, b.Value) })
	if len(programs.m) >= 8 { // a bisection's programs come and go
		programs.m = nil
	}
	if programs.m == nil {
		programs.m = map[string]*programNames{}
	}
	programs.m[key] = n
	return n, nil
}

// frames are the functions whose code addr is, innermost first: from
// the DWARF's inlining, else the function symbol that holds addr; nil
// when neither names it.
func (n *programNames) frames(addr uint64) []string {
	if n.inl != nil {
		if f := n.inl.Frames(addr); len(f) > 0 {
			return f
		}
	}
	i := sort.Search(len(n.syms), func(i int) bool { return n.syms[i].Value > addr }) - 1
	if i < 0 || (n.syms[i].Size > 0 && addr >= n.syms[i].Value+n.syms[i].Size) {
		return nil
	}
	return []string{n.syms[i].Name}
}

// sampleReader builds a profile from perf script's text.
type sampleReader struct {
	exe   string
	segs  []elf.ProgHeader // exe's loadable segments: file offsets to addresses
	names *programNames
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
	if r.names, err = cachedNames(exe, f); err != nil {
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
// then one indented line per frame, leaf first ("offset (object)"),
// then a blank line.
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
	hex, obj, _ := strings.Cut(line, " ")
	off, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return nil, fmt.Errorf("want a frame's address, got %q", line)
	}
	obj = strings.TrimSuffix(strings.TrimPrefix(obj, "("), ")")
	if !leaf && off > 0 {
		off--
	}
	key := fmt.Sprintf("%s\x00%x", obj, off)
	if loc := r.locs[key]; loc != nil {
		return loc, nil
	}
	loc := &profile.Location{}
	var names []string
	if !r.sameFile(obj) {
		names = []string{filepath.Base(obj)}
	} else if addr, ok := r.address(off); ok {
		loc.Address, names = addr, r.names.frames(addr)
	}
	if len(names) == 0 {
		names = []string{fmt.Sprintf("%#x (%s)", off, filepath.Base(obj))}
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
