package compare

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostsAsStrata: three hosts' A/B files of one benchmark compared
// together (shards or fleet jobs): the row's change is estimated with the
// hosts as strata, over every pair; the host whose change is +30 %
// against +5 % is named in a warning, by its file; with every host at +5 %
// none is.
func TestHostsAsStrata(t *testing.T) {
	dir := t.TempDir()
	build := func(shifts ...float64) (*Tables, *Decision, []string) {
		rng := rand.New(rand.NewPCG(3, 4))
		var paths []string
		for i, s := range shifts {
			p := filepath.Join(dir, string(rune('a'+i))+".txt")
			if err := os.WriteFile(p, abFile(rng, 5, 3, 0.02, 0.002, s), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		ts, err := Build(paths, Options{Col: "toolchain"})
		if err != nil {
			t.Fatal(err)
		}
		tab := ts.Tables[0]
		return ts, tab.Decision(tab.Rows[0], tab.Cols[1]), paths
	}
	ts, d, paths := build(1.05, 1.05, 1.30)
	if d == nil || d.Hosts == nil || d.Hosts.Hosts != 3 || d.Change.Test != "stratified t" || d.Change.N != 15 {
		t.Fatalf("not stratified over 3 hosts and 15 pairs: %+v", d)
	}
	if len(d.Hosts.Disagree) != 1 || d.Hosts.Disagree[0].Name != paths[2] {
		t.Errorf("disagreeing hosts %+v, want %s alone", d.Hosts.Disagree, paths[2])
	}
	if w := strings.Join(ts.Warnings, "\n"); !strings.Contains(w, "X-2 sec/op: a host disagrees with the others beyond its interval (a noisy or different machine), "+paths[2]+": +") {
		t.Errorf("warnings:\n%s", w)
	}
	ts, d, _ = build(1.05, 1.05, 1.05)
	if len(d.Hosts.Disagree) != 0 || strings.Contains(strings.Join(ts.Warnings, "\n"), "disagrees") {
		t.Errorf("three hosts at +5 %%: %+v\n%s", d.Hosts, ts.Warnings)
	}
	if r := d.Change.Ratio; r < 1.02 || r > 1.08 || d.Change.Lo > 1.05 || d.Change.Hi < 1.05 {
		t.Errorf("three hosts at +5 %%: %+v", d.Change)
	}
}
