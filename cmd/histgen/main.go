// Command histgen writes the synthetic git histories that measure
// benchctl bisect, and summarizes the bisections run over them.
//
//	histgen write --dir D --commits 64 --change 40:1.03 [--broken 5,9] [--rounds 1000] [--noise 0.2] [--fleet]
//	histgen summarize TRUTH.json...
//	histgen explain --dir D [--aa 20]
//	histgen explain-summary D.truth.json RUNS
//
// write makes D a git repository (see package histgen), prints its good
// and bad commits, and writes D.truth.json: the spec and the commits.
// summarize reads each truth file and the bisect.json next to it
// (D.bisect/bisect.json) and prints, per history kind, the rate of
// right answers with its 95 % Clopper–Pearson interval, the A/B runs
// against ⌈log₂ N⌉ and the machine time. explain writes the explain
// fixture's history (planted slowdowns in known functions, then A/A
// commits) and explain-summary judges ab --explain's runs over it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/calibrate"
	"github.com/ledgerbench/ledgerbench/internal/histgen"
)

// truth is what a history holds, for summarize.
type truth struct {
	Kind    string       `json:"kind"`
	Spec    histgen.Spec `json:"spec"`
	Commits []string     `json:"commits"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: histgen write|summarize|explain|explain-summary ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "write":
		err = write(os.Args[2:])
	case "summarize":
		err = summarize(os.Args[2:])
	case "explain":
		err = explainWrite(os.Args[2:])
	case "explain-summary":
		err = explainSummary(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: write, summarize, explain or explain-summary", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "histgen:", err)
		os.Exit(1)
	}
}

func write(args []string) error {
	fs := flag.NewFlagSet("write", flag.ExitOnError)
	dir := fs.String("dir", "", "the repository to write (must not exist)")
	kind := fs.String("kind", "", "the history's kind, for summarize")
	commits := fs.Int("commits", 32, "commits after the good end")
	rounds := fs.Int("rounds", 1000, "Work's rounds at the good end")
	noise := fs.Float64("noise", 0, "each process runs Work's rounds times a factor drawn in [1-noise, 1+noise]")
	withFleet := fs.Bool("fleet", false, "the history's program links the fleet (bisect --fleet, the agent command)")
	var changes, broken multi
	fs.Var(&changes, "change", "AT:FACTOR, a planted change (repeatable)")
	fs.Var(&broken, "broken", "a commit that does not compile (repeatable)")
	fs.Parse(args)
	harness, err := newHistory(*dir)
	if err != nil {
		return err
	}
	s := histgen.Spec{Commits: *commits, Rounds: *rounds, Noise: *noise, Harness: harness, Fleet: *withFleet}
	for _, c := range changes {
		at, f, ok := strings.Cut(c, ":")
		n, err1 := strconv.Atoi(at)
		x, err2 := strconv.ParseFloat(f, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("--change %q: AT:FACTOR", c)
		}
		s.Changes = append(s.Changes, histgen.Change{At: n, Factor: x})
	}
	for _, b := range broken {
		n, err := strconv.Atoi(b)
		if err != nil {
			return fmt.Errorf("--broken %q: a commit number", b)
		}
		s.Broken = append(s.Broken, n)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	cs, err := histgen.Write(*dir, s)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(truth{Kind: *kind, Spec: s, Commits: cs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Clean(*dir)+".truth.json", append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Println(cs[0], cs[len(cs)-1])
	return nil
}

// newHistory checks that dir, a history to write, is named and new, and
// returns the root of this module, which the history vendors.
func newHistory(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("--dir is required")
	}
	if _, err := os.Stat(dir); err == nil {
		return "", fmt.Errorf("%s exists", dir)
	}
	_, self, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(self))), nil
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// outcome is one bisection's result against its truth.
type outcome struct {
	right   bool
	claimed bool // a culprit was claimed
	abRuns  int
	log2    int
	took    time.Duration
	share   float64 // of the whole change, explained by the culprit; NaN without one
}

func summarize(paths []string) error {
	byKind := map[string][]outcome{}
	var kinds []string
	for _, p := range paths {
		o, kind, err := judge(p)
		if err != nil {
			return err
		}
		if _, ok := byKind[kind]; !ok {
			kinds = append(kinds, kind)
		}
		byKind[kind] = append(byKind[kind], o)
	}
	fmt.Println("| history | bisections | right | 95 % interval | culprit claimed | share explained (median, range) | A/B runs (median, max) | ⌈log₂ N⌉ + 2 | machine time (median, max) |")
	fmt.Println("|---|--:|--:|---|--:|---|---|--:|---|")
	for _, k := range kinds {
		outs := byKind[k]
		right, claimed := 0, 0
		var runs []int
		var took []time.Duration
		var shares []float64
		for _, o := range outs {
			if !math.IsNaN(o.share) {
				shares = append(shares, o.share)
			}
			if o.right {
				right++
			}
			if o.claimed {
				claimed++
			}
			runs = append(runs, o.abRuns)
			took = append(took, o.took)
		}
		slices.Sort(runs)
		slices.Sort(took)
		slices.Sort(shares)
		share := "—"
		if len(shares) > 0 {
			share = fmt.Sprintf("%.0f %% (%.0f–%.0f %%)", 100*shares[len(shares)/2], 100*shares[0], 100*shares[len(shares)-1])
		}
		lo, hi := calibrate.ClopperPearson(right, len(outs), 0.95)
		fmt.Printf("| %s | %d | %d | [%.0f %%, %.0f %%] | %d | %s | %d, %d | %d | %s, %s |\n", k, len(outs), right, 100*lo, 100*hi, claimed, share,
			runs[len(runs)/2], runs[len(runs)-1], outs[0].log2+2, took[len(took)/2].Round(time.Second), took[len(took)-1].Round(time.Second))
	}
	return nil
}

// judge reads a truth file and its bisection: right is the planted
// culprit found (the one that crosses half of the whole change), or, for a
// history without a change, no culprit claimed.
func judge(truthPath string) (outcome, string, error) {
	var t truth
	var r struct {
		Culprit *struct{ Hash string } `json:"culprit"`
		Own     *struct {
			Explains *struct{ Share float64 } `json:"explains"`
		} `json:"own"`
		ABRuns int           `json:"abRuns"`
		Log2   int           `json:"log2"`
		Took   time.Duration `json:"tookNs"`
	}
	b, err := os.ReadFile(truthPath)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil {
		return outcome{}, "", fmt.Errorf("%s: %v", truthPath, err)
	}
	rp := filepath.Join(strings.TrimSuffix(truthPath, ".truth.json")+".bisect", "bisect.json")
	b, err = os.ReadFile(rp)
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		return outcome{}, "", fmt.Errorf("%s: %v", rp, err)
	}
	o := outcome{claimed: r.Culprit != nil, abRuns: r.ABRuns, log2: r.Log2, took: r.Took, share: math.NaN()}
	if r.Own != nil && r.Own.Explains != nil {
		o.share = r.Own.Explains.Share
	}
	if o.log2 == 0 {
		o.log2 = int(math.Ceil(math.Log2(float64(t.Spec.Commits))))
	}
	want := expected(t.Spec)
	switch {
	case want == 0:
		o.right = r.Culprit == nil
	case r.Culprit != nil:
		o.right = r.Culprit.Hash == t.Commits[want]
	}
	kind := t.Kind
	if kind == "" {
		kind = fmt.Sprintf("%d commits", t.Spec.Commits)
	}
	return o, kind, nil
}

// expected is the commit where the log of the rounds first crosses half
// of the whole change's log (0: no change).
func expected(s histgen.Spec) int {
	total := 0.0
	for _, c := range s.Changes {
		total += math.Log(c.Factor)
	}
	if total == 0 {
		return 0
	}
	at := 0.0
	cs := slices.Clone(s.Changes)
	slices.SortFunc(cs, func(a, b histgen.Change) int { return a.At - b.At })
	for _, c := range cs {
		at += math.Log(c.Factor)
		if at/total > 0.5 {
			return c.At
		}
	}
	return 0
}
