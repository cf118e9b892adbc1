package harness

import (
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Registry holds benchmark declarations. It is safe for concurrent use;
// packages register into [Default] from init functions.
type Registry struct {
	mu      sync.Mutex
	benches []*Benchmark
	byID    map[string]*Benchmark
}

// Default is the registry that [Register] adds to and that benchctl runs.
var Default = &Registry{}

// Register adds b to [Default]; see [Registry.Register].
func Register(b *Benchmark) { Default.register(b, callerPkg()) }

// Register adds b and records the import path of the calling package as
// the benchmark's package ([Benchmark.Pkg]). An invalid declaration, an ID
// or a name registered twice is a programmer error and panics.
func (r *Registry) Register(b *Benchmark) { r.register(b, callerPkg()) }

func (r *Registry) register(b *Benchmark, pkg string) {
	if err := validate(b); err != nil {
		panic("harness: invalid benchmark: " + err.Error())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = map[string]*Benchmark{}
	}
	if _, dup := r.byID[b.ID()]; dup {
		panic("harness: benchmark " + b.ID() + " is registered twice")
	}
	for _, o := range r.benches {
		if o.Name == b.Name {
			panic("harness: benchmark name " + b.Name + " is used by two families: " + o.Family + " and " + b.Family)
		}
	}
	setPkg(b, pkg)
	r.byID[b.ID()] = b
	r.benches = append(r.benches, b)
}

// Lookup returns the benchmark with the given ID ("family/Name").
func (r *Registry) Lookup(id string) (*Benchmark, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.byID[id]
	return b, ok
}

// Benchmarks returns every benchmark, sorted by family then name.
func (r *Registry) Benchmarks() []*Benchmark {
	r.mu.Lock()
	out := slices.Clone(r.benches)
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Family != out[j].Family {
			return out[i].Family < out[j].Family
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// callerPkg is the import path of the first function on the stack outside
// this package: the package that declared the benchmark.
func callerPkg() string {
	pcs := make([]uintptr, 16)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	self := funcPkg(selfFunc)
	for {
		f, more := frames.Next()
		if p := funcPkg(f.Function); p != "" && p != self {
			return p
		}
		if !more {
			return ""
		}
	}
}

// selfFunc names a function of this package, to know its import path
// without spelling it.
var selfFunc = runtime.FuncForPC(reflect.ValueOf(funcPkg).Pointer()).Name()

// funcPkg is the import path in a qualified function name
// ("example.com/x/y.init.0", "example.com/x/y.(*T).M"). The linker
// escapes dots of the last path element as %2e.
func funcPkg(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	return strings.ReplaceAll(fn[:slash+1+dot], "%2e", ".")
}
