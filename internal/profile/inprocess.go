package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/felixge/fgprof"
	"github.com/google/pprof/profile"
)

// WindowLabel is the pprof label the harness puts on worker goroutines
// inside their measured windows; CPU profiles keep only those samples.
const WindowLabel = "benchctl-window"

// WindowContext is the labelled context for worker goroutines inside their
// measured window.
var WindowContext = pprof.WithLabels(context.Background(), pprof.Labels(WindowLabel, "measure"))

// AllocRate is the sampling rate of the allocation profile in profiling
// forks: every allocation, so that a profile's allocations and bytes per
// op are counted, not sampled, as a go test profiling fork's are
// (-test.memprofilerate=1). Recording each one slows the fork's
// allocations; its window's op count divides whatever it ran.
const AllocRate = 1

// Prepare sets the runtime's profiling rates for k. It runs before the
// trial's setup, so that the cumulative profiles hold events from before
// the window, which the snapshot difference then removes.
func Prepare(k Kind) {
	switch k {
	case Block:
		runtime.SetBlockProfileRate(1)
	case Mutex:
		runtime.SetMutexProfileFraction(1)
	case Allocs:
		runtime.MemProfileRate = AllocRate
	}
}

// Session is one in-process profile covering a window.
type Session struct {
	kind   Kind
	before []byte // the raw snapshot at the window's start, parsed at Stop
	buf    bytes.Buffer
	stopFG func() error
}

// Start begins the window of an in-process profile.
func Start(k Kind) (*Session, error) {
	s := &Session{kind: k}
	switch k {
	case CPU:
		if err := pprof.StartCPUProfile(&s.buf); err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
	case OffCPU:
		s.stopFG = fgprof.Start(&s.buf, fgprof.FormatPprof)
	case Block, Mutex, Allocs:
		b, err := rawSnapshot(k)
		if err != nil {
			return nil, err
		}
		s.before = b
	default:
		return nil, fmt.Errorf("%s is not an in-process profiler", k)
	}
	return s, nil
}

func lookupName(k Kind) string {
	if k == Allocs {
		return "allocs"
	}
	return string(k)
}

// rawSnapshot writes the cumulative profile k as it stands.
func rawSnapshot(k Kind) ([]byte, error) {
	if k == Allocs {
		runtime.GC() // the allocation profile is published at GC
	}
	var b bytes.Buffer
	if err := pprof.Lookup(lookupName(k)).WriteTo(&b, 0); err != nil {
		return nil, fmt.Errorf("%s profile: %w", k, err)
	}
	return b.Bytes(), nil
}

// windowDiff takes the closing snapshot and returns what the profile
// gained since the opening one, without the profiler's own work (writing
// the opening snapshot allocates inside the window).
func windowDiff(k Kind, before []byte) (*profile.Profile, error) {
	after, err := rawSnapshot(k)
	if err != nil {
		return nil, err
	}
	pb, err := profile.ParseData(before)
	if err != nil {
		return nil, err
	}
	pa, err := profile.ParseData(after)
	if err != nil {
		return nil, err
	}
	d, err := Diff(pb, pa)
	if err != nil {
		return nil, err
	}
	kept := d.Sample[:0]
	for _, s := range d.Sample {
		if !inProfiler(s) {
			kept = append(kept, s)
		}
	}
	d.Sample = kept
	return d.Compact(), nil
}

// inProfiler reports whether a sample's stack runs through the profiler.
func inProfiler(s *profile.Sample) bool {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil && (strings.HasPrefix(l.Function.Name, "runtime/pprof.(*Profile).WriteTo") ||
				strings.HasPrefix(l.Function.Name, "github.com/ledgerbench/ledgerbench/internal/profile.")) {
				return true
			}
		}
	}
	return false
}

// Stop ends the window and writes the profile to path (gzipped protobuf,
// readable by go tool pprof), creating its directory.
func (s *Session) Stop(path string) error {
	var p *profile.Profile
	var err error
	switch s.kind {
	case CPU:
		pprof.StopCPUProfile()
		if p, err = profile.Parse(&s.buf); err == nil {
			p = windowOnly(p)
		}
	case OffCPU:
		if err = s.stopFG(); err == nil {
			p, err = profile.Parse(&s.buf)
		}
	default:
		p, err = windowDiff(s.kind, s.before)
	}
	if err != nil {
		return fmt.Errorf("%s profile: %w", s.kind, err)
	}
	return Write(p, path)
}

// Write writes p to path (gzipped protobuf, readable by go tool pprof),
// creating its directory.
func Write(p *profile.Profile, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = p.Write(f)
	return errors.Join(err, f.Close())
}

// Diff returns after − before, without the samples that cancel out: what
// a cumulative profile gained during the window.
func Diff(before, after *profile.Profile) (*profile.Profile, error) {
	b := before.Copy()
	b.Scale(-1)
	d, err := profile.Merge([]*profile.Profile{after.Copy(), b})
	if err != nil {
		return nil, fmt.Errorf("diff profiles: %w", err)
	}
	kept := d.Sample[:0]
	for _, s := range d.Sample {
		for _, v := range s.Value {
			if v != 0 {
				kept = append(kept, s)
				break
			}
		}
	}
	d.Sample = kept
	return d.Compact(), nil
}

// windowOnly drops the samples not labelled as inside a measured window.
func windowOnly(p *profile.Profile) *profile.Profile {
	kept := p.Sample[:0]
	for _, s := range p.Sample {
		if len(s.Label[WindowLabel]) > 0 {
			kept = append(kept, s)
		}
	}
	p.Sample = kept
	return p.Compact()
}
