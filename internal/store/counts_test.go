package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/ledgerbench/ledgerbench/internal/payload"
)

// countedNow is each machine's series and open regressions counted from
// the rows, as the machines list read them before schema 11.
func countedNow(t *testing.T, s *Store) map[string][2]int {
	t.Helper()
	rs, err := s.db.Query(`SELECT m.machine_id,
		(SELECT COUNT(*) FROM series s WHERE s.machine = m.id),
		(SELECT COUNT(*) FROM changepoints c JOIN series s ON s.id = c.series WHERE s.machine = m.id AND c.open = 1)
		FROM machines m`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	out := map[string][2]int{}
	for rs.Next() {
		var id string
		var n [2]int
		if err := rs.Scan(&id, &n[0], &n[1]); err != nil {
			t.Fatal(err)
		}
		out[id] = n
	}
	return out
}

// checkCounts fails unless the machines list's counts are the rows'.
func checkCounts(t *testing.T, s *Store, when string) (open int) {
	t.Helper()
	ms, err := s.Machines(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := countedNow(t, s)
	if len(ms) != len(want) {
		t.Fatalf("%s: %d machines listed, %d stored", when, len(ms), len(want))
	}
	for _, m := range ms {
		if got := [2]int{m.Series, m.Open}; got != want[m.ID] {
			t.Errorf("%s: machine %s lists %d series and %d open regressions; its rows count %d and %d", when, m.ID, got[0], got[1], want[m.ID][0], want[m.ID][1])
		}
		open += m.Open
	}
	return open
}

// stepNight is machine m's run at night n: its Get slows by 30 % from
// night 6 and recovers from night 14, so a regression opens and closes;
// m's benchmarks grow by one each fourth night (new series).
func stepNight(m string, n int, rng *rand.Rand) payload.File {
	get := 100.0
	if n >= 6 && n < 14 {
		get = 130
	}
	vals := map[string]float64{"BenchmarkGet-2": get * (1 + 0.005*rng.NormFloat64())}
	for b := 0; b <= n/4; b++ {
		vals[fmt.Sprintf("BenchmarkPut/size=%d-2", b)] = 50 * (1 + 0.005*rng.NormFloat64())
	}
	return nightlyFile(m, "e1", n, vals)
}

// TestMachineCountsFollowUploadsAndAnalyses: a machine's counts of series
// and open regressions are kept as uploads and analyses change the rows,
// also when uploads and analyses of one machine run at once, and after a
// reindex.
func TestMachineCountsFollowUploadsAndAnalyses(t *testing.T) {
	backends(t, func(t *testing.T, spec string) {
		s := open(t, spec)
		ctx := context.Background()
		machines := []string{"m1", "m2", "m3"}
		maxOpen := 0
		for n := 0; n < 20; n++ {
			var wg sync.WaitGroup
			errs := make(chan error, 2*len(machines)+2)
			for i, m := range machines {
				rng := rand.New(rand.NewPCG(uint64(n), uint64(i)))
				f := stepNight(m, n, rng)
				wg.Go(func() {
					_, err := s.Put(ctx, []payload.File{f}, "")
					errs <- err
				})
			}
			// Two analyses beside the uploads: they work the same
			// series at once.
			for range 2 {
				wg.Go(func() {
					_, err := s.Analyze(ctx, "")
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			maxOpen = max(maxOpen, checkCounts(t, s, fmt.Sprintf("night %d", n)))
		}
		if _, err := s.Analyze(ctx, ""); err != nil {
			t.Fatal(err)
		}
		last := checkCounts(t, s, "analyzed")
		if maxOpen == 0 || last == maxOpen {
			t.Errorf("open regressions: at most %d, %d at the end: want some opened and some closed", maxOpen, last)
		}
		if err := s.Reindex(ctx); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, "reindexed")
		if _, err := s.Analyze(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if got := checkCounts(t, s, "reindexed and analyzed"); got != last {
			t.Errorf("%d open regressions after a reindex, %d before", got, last)
		}
	})
}

// TestUploadLabelsAreTheFilesFirstValues: the values a list of uploads
// shows, kept with each upload, are those its files' labels give: the
// first MaxLabelValues distinct values in byte order, whatever the
// files share.
func TestUploadLabelsAreTheFilesFirstValues(t *testing.T) {
	backends(t, func(t *testing.T, spec string) {
		s := open(t, spec)
		ctx := context.Background()
		var files []payload.File
		for i := range 40 {
			// Mixed case sorts apart in byte order; branch has a value
			// a file, commit 3; a file is in two uploads.
			files = append(files, payload.File{Name: fmt.Sprintf("f%02d.txt", i),
				Data: fmt.Appendf(nil, "machine-id: m%d\nbranch: %c-%d\ncommit: %d\nBenchmarkX-2 10 %d ns/op\n", i%2, "aB"[i%2], i, i%3, 10+i)})
		}
		for _, up := range [][]payload.File{files[:34], files[33:], files[:1], {nightlyFile("m1", "e1", 0, map[string]float64{"BenchmarkA-2": 1})}} {
			if _, err := s.Put(ctx, up, "alice"); err != nil {
				t.Fatal(err)
			}
		}
		kept := checkUploadLabels(t, s, "stored")
		if len(kept) != 4 {
			t.Fatalf("%d uploads listed, want 4", len(kept))
		}
		// The upgrade to schema 11 fills them in from the files' labels.
		if _, err := s.db.Exec(`DELETE FROM upload_labels`); err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.Exec(s.spell(migrations[10].stmts[4])); err != nil {
			t.Fatal(err)
		}
		checkUploadLabels(t, s, "migrated")
		if got := kept[3].LabelValues["branch"]; got != "B-1, B-11, B-13, B-15, B-17, B-19, B-21, B-23" {
			t.Errorf("the first upload's branches: %q", got)
		}
		if got := kept[0].LabelValues["commit"]; got != strings.Repeat("0", 40) || kept[0].LabelValues["nowhere"] != "" {
			t.Errorf("the nightly upload's commit %q, nowhere %q", got, kept[0].LabelValues["nowhere"])
		}
	})
}

// checkUploadLabels fails unless the labels listed of every upload are
// those its files' labels give, and returns the list.
func checkUploadLabels(t *testing.T, s *Store, when string) []UploadInfo {
	t.Helper()
	ctx := context.Background()
	labels := []string{"branch", "by", "commit", "machine-id", "nowhere", "upload", "upload-file", "upload-part"}
	q, _ := ParseQuery("")
	kept, err := s.ListUploads(ctx, q, labels, MaxListUploads)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) == 0 {
		return nil
	}
	fromFiles := make([]UploadInfo, len(kept))
	for i := range kept {
		fromFiles[i].UploadID = kept[i].UploadID
	}
	if err := s.labelValues(ctx, fileLabelsQuery, fromFiles, labels); err != nil {
		t.Fatal(err)
	}
	for i := range kept {
		if fmt.Sprint(kept[i].LabelValues) != fmt.Sprint(fromFiles[i].LabelValues) {
			t.Errorf("%s: upload %d: kept labels %v\nits files' %v", when, i, kept[i].LabelValues, fromFiles[i].LabelValues)
		}
	}
	return kept
}
