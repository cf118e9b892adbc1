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

// TestHostKeysIgnored: the files of three hosts of one class differ in
// their machine, env-id and host-pinned keys. Grouped by the whole
// configuration they are three tables of 5 pairs; with HostKeys ignored
// they are one row of 15 pairs, the hosts its strata.
func TestHostKeysIgnored(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	var paths []string
	for i, host := range []string{"box-a", "box-b", "box-c"} {
		p := filepath.Join(dir, host+".txt")
		head := "goos: linux\nmachine: " + host + "\nenv-id: e" + string(rune('0'+i)) + "\nhost-pinned: " + []string{"yes", "no", "yes"}[i] + "\nmachine-id: m1\n"
		if err := os.WriteFile(p, append([]byte(head), abFile(rng, 5, 3, 0.02, 0.002, 1.05)...), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	ts, err := Build(paths, Options{Col: "toolchain"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Tables) != 3 {
		t.Errorf("without Ignore: %d tables, want one a host", len(ts.Tables))
	}
	ts, err = Build(paths, Options{Col: "toolchain", Ignore: HostKeys})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Tables) != 1 {
		t.Fatalf("with HostKeys ignored: %d tables, want 1", len(ts.Tables))
	}
	tab := ts.Tables[0]
	d := tab.Decision(tab.Rows[0], tab.Cols[1])
	if d == nil || d.Change.N != 15 || d.Hosts == nil || d.Hosts.Hosts != 3 {
		t.Errorf("one row over the hosts: %+v, want 15 pairs in 3 strata", d)
	}
	if strings.Contains(tab.Config, "machine: ") || !strings.Contains(tab.Config, "machine-id: m1") {
		t.Errorf("the table's configuration %q: want the class's machine-id and no host's name", tab.Config)
	}
}
