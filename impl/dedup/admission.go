package dedup

// Admission is the map of the highest sequence ID pushed per producer. It
// is the part of deduplication that the three implementations do
// differently; see the package documentation for the contract.
type Admission interface {
	// Admit accepts seq for name when name has no pushed sequence or seq
	// is above it, and then stores highest (≥ seq) as the pushed sequence.
	// Otherwise it returns false and the pushed sequence it saw.
	Admit(name string, seq, highest int64) (accepted bool, pushed int64)
	// Pushed returns the pushed sequence of name.
	Pushed(name string) (int64, bool)
	// Set stores seq as name's pushed sequence unconditionally (recovery).
	Set(name string, seq int64)
	// Delete forgets name (purge of an inactive producer).
	Delete(name string)
	// Len is the number of producers tracked. It is exact when no Admit,
	// Set or Delete runs concurrently; meanwhile it may count a producer
	// deleted and re-admitted in flight twice (CAS sums per-stripe
	// counters). Range's count is the one that holds under concurrency.
	Len() int
	// Range calls fn for every producer until fn returns false, visiting
	// each name at most once even while others admit and delete.
	Range(fn func(name string, seq int64) bool)
}

// Implementations names the Admission implementations for benchmarks and
// tests, in the order master, the PR, this project.
var Implementations = []string{"locked", "cas", "atomic"}

// NewAdmission returns the named implementation, or nil.
func NewAdmission(name string) Admission {
	switch name {
	case "locked":
		return NewLocked()
	case "cas":
		return NewCAS()
	case "atomic":
		return NewAtomic()
	}
	return nil
}
