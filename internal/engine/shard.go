package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
)

// Shard is a share of a command's cases, for runs split over hosts that
// are handed an index (a CI matrix, a Kubernetes Indexed Job, a Slurm
// array): share Index (1-based) of Count. The zero Shard is every case.
type Shard struct {
	Index, Count int
}

// ParseShard reads "I/N", 1 ≤ I ≤ N.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("%q: want I/N, the share I of N (1/4)", s)
	}
	si, err1 := strconv.Atoi(strings.TrimSpace(i))
	sn, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%q: want I/N with two whole numbers (1/4)", s)
	}
	sh := Shard{Index: si, Count: sn}
	if err := sh.check(); err != nil {
		return Shard{}, fmt.Errorf("%q: %w", s, err)
	}
	return sh, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Whole reports whether s is every case (no sharding).
func (s Shard) Whole() bool { return s.Count <= 1 }

func (s Shard) check() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Count < 1 || s.Index < 1 || s.Index > s.Count {
		return fmt.Errorf("share %d of %d: want 1 ≤ I ≤ N", s.Index, s.Count)
	}
	return nil
}

// Of is the share s of cases, in their order: the cases are taken in
// comparison groups, each group whole (the points of a benchmark that
// differ only in its implementation axis, impl=paged beside
// impl=skiplist, are compared with each other and so run on one host),
// and the groups are dealt to the shares longest first, each to the
// share with the least planned time so far (the lower index on a tie),
// so that every share takes about the same time. The deal depends only
// on the cases and o: every host that plans the same command computes
// the same shares. It is an error when the share holds no case (more
// shares than groups).
func (s Shard) Of(cases []Case, o Options) ([]Case, error) {
	if s.Whole() {
		return cases, nil
	}
	type group struct {
		key  string
		cost time.Duration
		idx  []int
	}
	var groups []*group
	for _, idx := range Groups(cases) {
		g := &group{key: comparisonKey(cases[idx[0]]), idx: idx}
		for _, i := range idx {
			g.cost += o.caseCost(cases[i])
		}
		groups = append(groups, g)
	}
	slices.SortStableFunc(groups, func(a, b *group) int {
		return cmp.Or(cmp.Compare(b.cost, a.cost), cmp.Compare(a.key, b.key))
	})
	load := make([]time.Duration, s.Count)
	var mine []int
	for _, g := range groups {
		to := 0
		for i := range load {
			if load[i] < load[to] {
				to = i
			}
		}
		load[to] += g.cost
		if to == s.Index-1 {
			mine = append(mine, g.idx...)
		}
	}
	if len(mine) == 0 {
		return nil, fmt.Errorf("share %s holds no case: the %d selected cases form %d comparison group(s), fewer than %d shares", s, len(cases), len(groups), s.Count)
	}
	slices.Sort(mine)
	out := make([]Case, len(mine))
	for i, j := range mine {
		out[i] = cases[j]
	}
	return out, nil
}

// Groups are the indices of cases by comparison group, first seen
// first: the cases one implementation axis compares with each other
// (the same benchmark and parameters but the axis's), each case alone
// when its benchmark declares no axis. A group's cases must run on one
// host, in the same rounds, for its pull-request table to pair them.
func Groups(cases []Case) [][]int {
	var groups [][]int
	at := map[string]int{}
	for i, c := range cases {
		k := comparisonKey(c)
		g, ok := at[k]
		if !ok {
			g = len(groups)
			at[k] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// comparisonKey is the case's name without its implementation axis (the
// parameter its benchmark compares implementations by): the cases with
// one key are compared with each other.
func comparisonKey(c Case) string {
	r := c.Result()
	if r.Axis == "" {
		return c.Name()
	}
	var b strings.Builder
	b.WriteString(r.Benchmark)
	for _, p := range c.Params {
		if p.Name != r.Axis {
			b.WriteString("/" + p.Name + "=" + p.Value)
		}
	}
	return b.String()
}

// caseCost is the planned time of a case's forks: each fork's start and
// its warmup and measured iterations (one whose time is not planned, a
// single shot or a count of ops, counted as a second).
func (o Options) caseCost(c Case) time.Duration {
	const start, unplanned = 300 * time.Millisecond, time.Second
	mode := o.mode(c)
	per := start
	for _, spec := range [...]result.IterSpec{o.warmup(mode), o.Measure} {
		t := spec.Time
		if mode == result.SingleShot || t <= 0 {
			t = unplanned
		}
		per += time.Duration(spec.Count) * t
	}
	return time.Duration(max(o.Forks, 1)) * per
}

// shardConfig is the shard as the result files record it: "" for every
// case.
func (o Options) shardConfig() string {
	if o.Shard.Whole() {
		return ""
	}
	return o.Shard.String()
}
