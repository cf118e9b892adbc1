package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// The conformance tests run on SQLite always and on PostgreSQL when
// LEDGERBENCH_POSTGRES names a server (postgres://USER@HOST:PORT/DB) on
// which the user may create databases: each test gets a database of its
// own, dropped at its end.
func backends(t *testing.T, fn func(t *testing.T, spec string)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, "sqlite:"+filepath.Join(t.TempDir(), "results.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, postgresDB(t))
	})
}

func postgresDB(t *testing.T) string { return testenv.PostgresDB(t) }

func open(t *testing.T, spec string) *Store {
	t.Helper()
	s, err := Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// nightlyFile is a run of machine at night i: each benchmark's value
// over three forks, as benchctl writes them.
func nightlyFile(machine, env string, night int, values map[string]float64) payload.File {
	var b strings.Builder
	at := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC).AddDate(0, 0, night)
	fmt.Fprintf(&b, "machine-id: %s\nenv-id: %s\ncommit: %040d\nrun-time: %s\ncpu: Test CPU\ngoos: linux\ngoarch: amd64\npkg: example.com/m/cache\n\n",
		machine, env, night, at.Format(time.RFC3339))
	for _, name := range sortedKeys(values) {
		for f := 1; f <= 3; f++ {
			v := values[name] * (1 + 0.002*float64(f-2))
			fmt.Fprintf(&b, "%s 1000 %g ns/op 64 B/op\n# benchctl: fork=%d iter=0\n", name, v, f)
		}
	}
	return payload.File{Name: fmt.Sprintf("night%03d.txt", night), Data: []byte(b.String())}
}

func sortedKeys(m map[string]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

func count(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPutIsIdempotentAndAllOrNothing(t *testing.T) {
	backends(t, func(t *testing.T, spec string) {
		s := open(t, spec)
		ctx := context.Background()
		f := nightlyFile("m1", "e1", 0, map[string]float64{"BenchmarkGet/impl=paged-2": 100, "BenchmarkGet/impl=skiplist-2": 150})
		up, err := s.Put(ctx, []payload.File{f}, "alice")
		if err != nil || up.Existing || up.Results != 6 || up.ID != payload.UploadID([]payload.File{f}) || len(up.Machines) != 1 || up.Machines[0] != "m1" {
			t.Fatalf("first put: %+v, %v", up, err)
		}
		again, err := s.Put(ctx, []payload.File{f}, "bob")
		if err != nil || !again.Existing || again.ID != up.ID {
			t.Fatalf("second put: %+v, %v", again, err)
		}
		if n := count(t, s, "uploads"); n != 1 {
			t.Errorf("%d uploads after a re-upload, want 1", n)
		}
		if n := count(t, s, "points"); n != 2 {
			t.Errorf("%d points, want 2 (one per benchmark: the median of its forks)", n)
		}
		name, data, err := s.Contents(ctx, up.ID, 0)
		if err != nil || name != f.Name || string(data) != string(f.Data) {
			t.Errorf("contents differ from the upload (%v)", err)
		}
		bad := []struct {
			name  string
			files []payload.File
		}{
			{"syntax", []payload.File{f, {Name: "bad.txt", Data: []byte("machine-id: m1\nBenchmarkX 10 abc ns/op\n")}}},
			{"no machine-id", []payload.File{{Name: "go.txt", Data: []byte("pkg: x\nBenchmarkX 10 5 ns/op\n")}}},
			{"no results", []payload.File{{Name: "empty.txt", Data: []byte("machine-id: m1\n")}}},
			{"two machines", []payload.File{{Name: "two.txt", Data: []byte("machine-id: a\nBenchmarkX 10 5 ns/op\nmachine-id: b\nBenchmarkX 10 5 ns/op\n")}}},
			{"none", nil},
		}
		for _, b := range bad {
			if _, err := s.Put(ctx, b.files, ""); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", b.name, err)
			}
		}
		if n := count(t, s, "uploads"); n != 1 {
			t.Errorf("%d uploads after refused ones, want 1", n)
		}
		if n := count(t, s, "files"); n != 1 {
			t.Errorf("%d files after refused ones, want 1 (the valid file of a refused upload is not kept)", n)
		}
	})
}

func TestConcurrentPutsOfTheSameFilesStoreOne(t *testing.T) {
	backends(t, func(t *testing.T, spec string) {
		s := open(t, spec)
		files := []payload.File{nightlyFile("m1", "e1", 0, map[string]float64{"BenchmarkA-2": 1, "BenchmarkB-2": 2})}
		other := []payload.File{nightlyFile("m1", "e1", 1, map[string]float64{"BenchmarkA-2": 1, "BenchmarkC-2": 3})}
		var wg sync.WaitGroup
		var mu sync.Mutex
		existing := 0
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				fs := files
				if i%2 == 1 {
					fs = other
				}
				up, err := s.Put(context.Background(), fs, "")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if up.Existing {
					existing++
				}
				mu.Unlock()
			}(i)
		}
		wg.Wait()
		if n := count(t, s, "uploads"); n != 2 || existing != 6 {
			t.Errorf("%d uploads, %d reported existing; want 2 and 6", n, existing)
		}
		if n := count(t, s, "benchmarks"); n != 3 {
			t.Errorf("%d benchmarks, want 3", n)
		}
		var pts int
		s.db.QueryRow("SELECT SUM(points) FROM series").Scan(&pts)
		if n := count(t, s, "points"); n != 4 || pts != 4 {
			t.Errorf("%d points (series count %d), want 4", n, pts)
		}
	})
}

func search(t *testing.T, s *Store, q string) []string {
	t.Helper()
	pq, err := ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = s.Search(context.Background(), pq, func(r *benchfmt.Result) error {
		out = append(out, r.GetConfig("machine-id")+" "+string(r.Name.Full())+" "+r.GetConfig("upload-part"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSearchByLabelsAndNameKeys(t *testing.T) {
	backends(t, func(t *testing.T, spec string) {
		s := open(t, spec)
		ctx := context.Background()
		vals := map[string]float64{"BenchmarkGet/impl=paged/size=8-2": 1, "BenchmarkGet/impl=skiplist/size=8-2": 2, "BenchmarkPut-2": 3}
		u1, _ := s.Put(ctx, []payload.File{nightlyFile("m1", "e1", 0, vals)}, "")
		u2, _ := s.Put(ctx, []payload.File{nightlyFile("m2", "e1", 1, vals)}, "")
		cases := []struct {
			q    string
			want int
		}{
			{"", 18},
			{"machine-id:m1", 9},
			{"machine-id:m1 /impl:paged", 3},
			{"/impl:skiplist /size:8", 6},
			{"name:Put", 6},
			{"name:Get machine-id:m2", 6},
			{"upload:" + u2.ID, 9},
			{"upload-part:" + u1.ID + "/0", 9},
			{"commit>0000000000000000000000000000000000000000", 9},
			{"commit<0000000000000000000000000000000000000001", 9},
			{"machine-id:m3", 0},
			{`"commit:'; DROP TABLE uploads; --"`, 0},
			{`"name:x' OR '1'='1"`, 0},
			{`"machine-id:m1" /impl:none`, 0},
		}
		for _, c := range cases {
			if got := search(t, s, c.q); len(got) != c.want {
				t.Errorf("%q: %d results, want %d: %v", c.q, len(got), c.want, got)
			}
		}
		if n := count(t, s, "uploads"); n != 2 {
			t.Errorf("uploads table: %d rows after the SQL-looking query", n)
		}
		for _, q := range []string{"machine", "Machine:m1", ":x", "/:x", "commit:'; DROP TABLE uploads; --", strings.Repeat("a:b ", MaxQueryWords+1)} {
			if _, err := ParseQuery(q); !errors.Is(err, ErrQuery) {
				t.Errorf("ParseQuery(%q): %v, want ErrQuery", q, err)
			}
		}
		ups, err := s.ListUploads(ctx, mustQuery(t, "/impl:paged"), []string{"machine-id", "commit"}, 10)
		if err != nil || len(ups) != 2 || ups[0].UploadID != u2.ID || ups[0].Count != 3 || ups[0].LabelValues["machine-id"] != "m2" {
			t.Errorf("ListUploads: %+v, %v", ups, err)
		}
		ups, _ = s.ListUploads(ctx, mustQuery(t, ""), nil, 1)
		if len(ups) != 1 || ups[0].UploadID != u2.ID || ups[0].Count != 9 {
			t.Errorf("ListUploads with limit 1: %+v", ups)
		}
		// Cheap requests stay cheap: labels asked twice count once; too
		// many labels or too long a list are refused, not run.
		ups, err = s.ListUploads(ctx, mustQuery(t, ""), []string{"commit", "machine-id", "commit", "nothing"}, 10)
		if err != nil || len(ups) != 2 || ups[0].LabelValues["machine-id"] != "m2" || len(ups[0].LabelValues) != 2 ||
			ups[1].UploadID != u1.ID || ups[1].LabelValues["machine-id"] != "m1" || ups[1].LabelValues["commit"] == ups[0].LabelValues["commit"] {
			t.Errorf("ListUploads with a repeated label: %+v, %v", ups, err)
		}
		// An upload of several files lists each label's values, eight at
		// most, beside uploads of one.
		var nine []payload.File
		for i := range 9 {
			nine = append(nine, nightlyFile("m3", "e1", 10+i, vals))
		}
		u3, err := s.Put(ctx, nine, "")
		if err != nil {
			t.Fatal(err)
		}
		ups, err = s.ListUploads(ctx, mustQuery(t, ""), []string{"commit", "machine-id"}, 3)
		if err != nil || len(ups) != 3 || ups[0].UploadID != u3.ID || ups[0].LabelValues["machine-id"] != "m3" ||
			strings.Count(ups[0].LabelValues["commit"], ", ") != 7 || ups[2].LabelValues["machine-id"] != "m1" {
			t.Errorf("ListUploads of a nine-file upload: %+v, %v", ups, err)
		}
		many := make([]string, 3000)
		for i := range many {
			many[i] = fmt.Sprintf("l%d", i)
		}
		if _, err := s.ListUploads(ctx, mustQuery(t, ""), many, 10); !errors.Is(err, ErrQuery) {
			t.Errorf("ListUploads with 3,000 labels: %v, want ErrQuery", err)
		}
		if _, err := s.ListUploads(ctx, mustQuery(t, ""), nil, MaxListUploads+1); !errors.Is(err, ErrQuery) {
			t.Errorf("ListUploads of %d: %v, want ErrQuery", MaxListUploads+1, err)
		}
	})
}

func mustQuery(t *testing.T, q string) *Query {
	pq, err := ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return pq
}

// fleet uploads nights of two machines: m1's BenchmarkGet slows down by
// 20 % from night step on, m2's never; m2's env-id changes at night 10
// with a shift of BenchmarkGet too.
func fleet(t *testing.T, s *Store, nights, step int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < nights; n++ {
		for _, m := range []string{"m1", "m2"} {
			get, env := 100.0, "e1"
			if m == "m1" && n >= step {
				get = 120
			}
			if m == "m2" && n >= 10 {
				get, env = 130, "e2"
			}
			vals := map[string]float64{
				"BenchmarkGet-2": get * (1 + 0.01*rng.NormFloat64()),
				"BenchmarkPut-2": 50 * (1 + 0.01*rng.NormFloat64()),
			}
			if _, err := s.Put(context.Background(), []payload.File{nightlyFile(m, env, n, vals)}, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestSeriesChangePointsAndRegressions(t *testing.T) {
	backends(t, func(t *testing.T, spec string) {
		s := open(t, spec)
		ctx := context.Background()
		fleet(t, s, 26, 21)
		n, err := s.Analyze(ctx, "")
		if err != nil || n != 4 {
			t.Fatalf("Analyze: %d series, %v; want 4", n, err)
		}
		if n, _ := s.Analyze(ctx, ""); n != 0 {
			t.Errorf("a second Analyze redid %d series", n)
		}
		ser, err := s.Series(ctx, SeriesKey{Machine: "m1", Benchmark: "BenchmarkGet-2", Unit: "sec/op"})
		if err != nil || len(ser.Points) != 26 || ser.Pending || ser.Pkg != "example.com/m/cache" {
			t.Fatalf("series: %v, %+v", err, ser)
		}
		// Each run keeps its three forks' range around their median
		// (the forks lie ±0.2 % around it).
		for _, p := range ser.Points {
			if p.N != 3 || math.Abs(p.Lo/p.Value-0.998) > 1e-9 || math.Abs(p.Hi/p.Value-1.002) > 1e-9 {
				t.Fatalf("a run's forks: %+v", p)
			}
		}
		for i := 1; i < len(ser.Points); i++ {
			if !ser.Points[i].At.After(ser.Points[i-1].At) {
				t.Fatalf("points out of order at %d", i)
			}
		}
		if len(ser.ChangePoints) != 1 || !ser.ChangePoints[0].Open || ser.ChangePoints[0].After.Commit != fmt.Sprintf("%040d", 21) ||
			ser.ChangePoints[0].Before.Commit != fmt.Sprintf("%040d", 20) || ser.ChangePoints[0].Change < 15 {
			t.Fatalf("change points of m1 Get: %+v", ser.ChangePoints)
		}
		regs, err := s.Regressions(ctx, "m1", 0)
		if err != nil || len(regs) != 1 || regs[0].Benchmark != "BenchmarkGet-2" {
			t.Errorf("m1 regressions: %+v, %v", regs, err)
		}
		regs, _ = s.Regressions(ctx, "m2", 0)
		if len(regs) != 1 || !regs[0].EnvChanged || regs[0].Open {
			t.Errorf("m2: the shift at the env-id change should be annotated, not open: %+v", regs)
		}
		ms, err := s.Machines(ctx)
		if err != nil || len(ms) != 2 || ms[0].ID != "m1" || ms[0].Open != 1 || ms[1].Open != 0 || ms[0].Runs != 26 || ms[1].Facts["env-id"] != "e2" || ms[0].Facts["cpu"] != "Test CPU" {
			t.Errorf("machines: %+v, %v", ms, err)
		}
		across, err := s.Across(ctx, "", "BenchmarkGet-2", "sec/op")
		if err != nil || len(across) != 2 || !across[0].Open || across[1].Open || across[1].Latest < 120e-9 {
			t.Errorf("across machines: %+v, %v", across, err)
		}
		// A machine of 8 CPUs runs the same benchmark: its GOMAXPROCS
		// suffix does not keep it apart. LIKE's wildcards match no more.
		if _, err := s.Put(ctx, []payload.File{nightlyFile("m3", "e3", 1, map[string]float64{"BenchmarkGet-8": 90, "BenchmarkGetAll-8": 9})}, ""); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"BenchmarkGet", "BenchmarkGet-2", "BenchmarkGet-8"} {
			if across, err := s.Across(ctx, "", name, "sec/op"); err != nil || len(across) != 3 || across[2].Machine != "m3" {
				t.Errorf("across machines of %s: %+v, %v", name, across, err)
			}
		}
		if across, _ := s.Across(ctx, "", "BenchmarkG_t", "sec/op"); len(across) != 0 {
			t.Errorf("BenchmarkG_t matched %+v", across)
		}
		// A new night marks the series pending until analyzed again.
		fleet2 := nightlyFile("m1", "e1", 30, map[string]float64{"BenchmarkGet-2": 120, "BenchmarkPut-2": 50})
		s.Put(ctx, []payload.File{fleet2}, "")
		if ser, _ := s.Series(ctx, SeriesKey{Machine: "m1", Benchmark: "BenchmarkGet-2", Unit: "sec/op"}); !ser.Pending {
			t.Error("a series with a new point is not pending")
		}
		if _, err := s.Series(ctx, SeriesKey{Machine: "m1", Benchmark: "BenchmarkNope", Unit: "sec/op"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown series: %v", err)
		}
	})
}

func TestMigrationsFromEveryVersion(t *testing.T) {
	for from := 0; from < SchemaVersion; from++ {
		t.Run(fmt.Sprintf("from%d", from), func(t *testing.T) {
			backends(t, func(t *testing.T, spec string) {
				ctx := context.Background()
				old, err := openAt(ctx, spec, from)
				if err != nil {
					t.Fatal(err)
				}
				f := writeAsVersion(t, old, from)
				old.Close()
				s := open(t, spec)
				if v, _ := s.Version(ctx); v != SchemaVersion {
					t.Fatalf("version %d after migrating, want %d", v, SchemaVersion)
				}
				if from == 5 {
					if n := storedCopies(t, s, f.Data); n != 1 {
						t.Errorf("the same bytes stored %d times after migrating to 6, want once", n)
					}
					if name, data, err := s.Contents(ctx, "dup", 0); err != nil || name != "renamed.txt" || !bytes.Equal(data, f.Data) {
						t.Errorf("the renamed file after migrating: %q, %d bytes, %v", name, len(data), err)
					}
				}
				if from >= 1 {
					ser, err := s.Series(ctx, SeriesKey{Machine: "m1", Benchmark: "BenchmarkGet/impl=paged-2", Unit: "sec/op"})
					if err != nil || len(ser.Points) != 1 || !ser.Pending || ser.Points[0].Upload != payload.UploadID([]payload.File{f}) || ser.Points[0].Commit != fmt.Sprintf("%040d", 0) {
						t.Fatalf("series after migrating from %d: %+v, %v", from, ser, err)
					}
					if got := search(t, s, "/impl:paged"); len(got) != 3 {
						t.Errorf("search after migrating: %v", got)
					}
				}
				checkCounts(t, s, "migrated")
				if kept := checkUploadLabels(t, s, "migrated"); from >= 1 && (len(kept) == 0 || kept[len(kept)-1].LabelValues["upload"] == "") {
					t.Errorf("the upload's labels after migrating: %+v", kept)
				}
				// Uploads work on the migrated schema.
				if _, err := s.Put(ctx, []payload.File{nightlyFile("m1", "e1", 1, map[string]float64{"BenchmarkGet/impl=paged-2": 101})}, ""); err != nil {
					t.Fatal(err)
				}
				if n, err := s.Analyze(ctx, ""); err != nil || n != 1 {
					t.Errorf("Analyze after migrating: %d, %v", n, err)
				}
			})
		})
	}
}

// writeAsVersion writes an upload into old, a store at schema from, as
// that version's code wrote it: the raw tables, then the index of its
// version (none before schema 1); it returns the file.
func writeAsVersion(t *testing.T, old *Store, from int) payload.File {
	t.Helper()
	ctx := context.Background()
	if from < 1 {
		return payload.File{}
	}
	f := nightlyFile("m1", "e1", 0, map[string]float64{"BenchmarkGet/impl=paged-2": 100})
	tx, _ := old.db.BeginTx(ctx, nil)
	var pk int64
	if err := tx.QueryRow(old.q(`INSERT INTO uploads (upload_id, content_hash, created, by_user, files, results) VALUES (?, ?, ?, '', 1, 3) RETURNING id`),
		payload.UploadID([]payload.File{f}), payload.HashFiles([]payload.File{f}), time.Now().UnixNano()).Scan(&pk); err != nil {
		t.Fatal(err)
	}
	ps, _ := validate([]payload.File{f})
	ps[0].prepare()
	fid, pairs, err := old.insertFile(ctx, tx, pk, 0, ps[0], 0, map[string]string{"upload": payload.UploadID([]payload.File{f})})
	if err != nil {
		t.Fatal(err)
	}
	if from >= 11 { // as Put of version 11 wrote them
		labels := uploadLabels{}
		labels.add(pairs)
		if err := old.insertLabels(ctx, tx, "upload_labels (upload, name, value)", pk, labels.pairs()); err != nil {
			t.Fatal(err)
		}
	}
	if from == 5 {
		// Version 5 stored the same bytes under another
		// name twice; 6 keeps them once.
		var pk2 int64
		if err := tx.QueryRow(old.q(`INSERT INTO uploads (upload_id, content_hash, created, by_user, files, results) VALUES ('dup', 'dup', ?, '', 1, 3) RETURNING id`),
			time.Now().UnixNano()).Scan(&pk2); err != nil {
			t.Fatal(err)
		}
		renamed := ps[0]
		renamed.Name = "renamed.txt"
		if _, _, err := old.insertFile(ctx, tx, pk2, 0, renamed, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	if from >= 4 { // as Put of version 4 wrote it
		if _, err := tx.Exec(old.q(`UPDATE files SET upload_key = ? WHERE id = ?`), payload.UploadID([]payload.File{f}), fid); err != nil {
			t.Fatal(err)
		}
	}
	if from >= 2 {
		if err := newIndexer(old, from, false).file(ctx, tx, fid, f.Name, f.Data, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestNewerSchemaIsRefused(t *testing.T) {
	backends(t, func(t *testing.T, spec string) {
		s := open(t, spec)
		s.db.Exec(s.q(`INSERT INTO schema_version (version) VALUES (?)`), SchemaVersion+1)
		s.Close()
		_, err := Open(context.Background(), spec)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("schema version %d, newer than this benchctl's %d", SchemaVersion+1, SchemaVersion)) {
			t.Errorf("opening a newer schema: %v", err)
		}
	})
}

func TestReindexRebuildsTheSameIndex(t *testing.T) {
	backends(t, func(t *testing.T, spec string) {
		s := open(t, spec)
		ctx := context.Background()
		fleet(t, s, 12, 8)
		s.Analyze(ctx, "")
		before, _ := s.Series(ctx, SeriesKey{Machine: "m1", Benchmark: "BenchmarkGet-2", Unit: "sec/op"})
		if err := s.Reindex(ctx); err != nil {
			t.Fatal(err)
		}
		s.Analyze(ctx, "")
		after, err := s.Series(ctx, SeriesKey{Machine: "m1", Benchmark: "BenchmarkGet-2", Unit: "sec/op"})
		if err != nil || len(after.Points) != len(before.Points) || len(after.ChangePoints) != len(before.ChangePoints) {
			t.Fatalf("reindex: %d points, %d change points; before %d, %d (%v)", len(after.Points), len(after.ChangePoints), len(before.Points), len(before.ChangePoints), err)
		}
		for i := range after.Points {
			if after.Points[i].Value != before.Points[i].Value || after.Points[i].Commit != before.Points[i].Commit {
				t.Fatalf("point %d: %+v, before %+v", i, after.Points[i], before.Points[i])
			}
		}
	})
}

func TestUnavailableDatabase(t *testing.T) {
	s := open(t, "sqlite:"+filepath.Join(t.TempDir(), "r.db"))
	s.db.Close()
	_, err := s.Put(context.Background(), []payload.File{nightlyFile("m1", "e1", 0, map[string]float64{"BenchmarkA-2": 1})}, "")
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("put on a closed database: %v, want ErrUnavailable", err)
	}
	if _, err := Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=2"); err == nil || !strings.Contains(err.Error(), "cannot connect") {
		t.Errorf("a server that is down: %v", err)
	}
	for _, spec := range []string{"sqlite:", "mysql://x", "sqlite:a.db?mode=ro", "postgres://u:secret@host/db\x7f"} {
		if _, err := Open(context.Background(), spec); err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q): %v", spec, err)
		}
	}
}

func TestRunTimeFromTheMadeByComment(t *testing.T) {
	data := []byte("# benchctl: made by `benchctl nightly --results r` at 2026-11-30T08:18:41Z; raw output, not edited\nmachine-id: m\nBenchmarkX 1 2 ns/op\n")
	if fi := readInfo(data, time.Unix(0, 0)); !fi.at.Equal(time.Date(2026, 11, 30, 8, 18, 41, 0, time.UTC)) || fi.machine != "m" {
		t.Errorf("made-by time: %v %q", fi.at, fi.machine)
	}
	data = append([]byte("run-time: 2027-01-02T03:04:05Z\n"), data...)
	if fi := readInfo(data, time.Unix(0, 0)); !fi.at.Equal(time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("run-time key: %v", fi.at)
	}
	up := time.Date(2026, 5, 5, 0, 0, 0, 0, time.UTC)
	if fi := readInfo([]byte("machine-id: m\nBenchmarkX 1 2 ns/op\n"), up); !fi.at.Equal(up) {
		t.Errorf("neither: %v, want the upload time", fi.at)
	}
}

func TestFullDatabaseStoresNothingHalf(t *testing.T) {
	s := open(t, "sqlite:"+filepath.Join(t.TempDir(), "r.db"))
	ctx := context.Background()
	s.db.SetMaxOpenConns(1) // the page limit below is per connection
	if _, err := s.Put(ctx, []payload.File{nightlyFile("m1", "e1", 0, map[string]float64{"BenchmarkA-2": 1})}, ""); err != nil {
		t.Fatal(err)
	}
	var pages int
	s.db.QueryRow("PRAGMA page_count").Scan(&pages)
	if _, err := s.db.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", pages+2)); err != nil {
		t.Fatal(err)
	}
	big := map[string]float64{}
	for i := 0; i < 3000; i++ {
		big[fmt.Sprintf("BenchmarkBig/case=%d-2", i)] = float64(i + 1)
	}
	_, err := s.Put(ctx, []payload.File{nightlyFile("m1", "e1", 1, big)}, "")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "full") {
		t.Fatalf("put into a full database: %v, want ErrUnavailable (full)", err)
	}
	if n := count(t, s, "uploads"); n != 1 {
		t.Errorf("%d uploads after the failed one, want 1", n)
	}
	if n := count(t, s, "points"); n != 1 {
		t.Errorf("%d points after the failed upload, want 1: half of it was kept", n)
	}
	if _, err := s.Put(ctx, []payload.File{nightlyFile("m1", "e1", 2, map[string]float64{"BenchmarkA-2": 1})}, ""); err != nil {
		t.Errorf("a small upload after the full one: %v", err)
	}
}

// TestLabelOrderIsByteOrder: key<value and key>value compare bytes on
// every back end, whatever PostgreSQL's collation: "B" sorts before "a",
// as Go compares them when it filters the results.
func TestLabelOrderIsByteOrder(t *testing.T) {
	backends(t, func(t *testing.T, spec string) {
		s := open(t, spec)
		ctx := context.Background()
		for i, branch := range []string{"B", "a"} {
			f := payload.File{Name: branch + ".txt", Data: fmt.Appendf(nil, "machine-id: m\nbranch: %s\ncommit: %d\nBenchmarkX-2 10 %d ns/op\n", branch, i, 10+i)}
			if _, err := s.Put(ctx, []payload.File{f}, ""); err != nil {
				t.Fatal(err)
			}
		}
		for q, want := range map[string]int{"branch<a": 1, "branch>B": 1, "branch<B": 0, "branch>a": 0} {
			if got := search(t, s, q); len(got) != want {
				t.Errorf("%s: %v, want %d results", q, got, want)
			}
		}
	})
}

// TestSameBytesUnderAnotherNameCountOnce: a file uploaded again under
// another name is stored (a new upload) but not counted again in the
// series, says so in its warnings, and a reindex counts it once too.
func TestSameBytesUnderAnotherNameCountOnce(t *testing.T) {
	backends(t, func(t *testing.T, spec string) {
		s := open(t, spec)
		ctx := context.Background()
		f := nightlyFile("m1", "e1", 0, map[string]float64{"BenchmarkGet-2": 100})
		first, err := s.Put(ctx, []payload.File{f}, "")
		if err != nil {
			t.Fatal(err)
		}
		again := payload.File{Name: "renamed.txt", Data: f.Data}
		up, err := s.Put(ctx, []payload.File{again}, "")
		if err != nil || up.Existing || len(up.Warnings) != 1 || !strings.Contains(up.Warnings[0], "the same bytes as "+first.ID+"/0") {
			t.Fatalf("the same bytes renamed: %+v, %v", up, err)
		}
		k := SeriesKey{Machine: "m1", Benchmark: "BenchmarkGet-2", Unit: "sec/op"}
		points := func() int {
			ser, err := s.Series(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			return len(ser.Points)
		}
		if n := points(); n != 1 {
			t.Errorf("%d points after the same run twice, want 1", n)
		}
		if n := storedCopies(t, s, f.Data); n != 1 {
			t.Errorf("the same bytes stored %d times, want once", n)
		}
		for _, u := range []*Upload{first, up} {
			if _, data, err := s.Contents(ctx, u.ID, 0); err != nil || !bytes.Equal(data, f.Data) {
				t.Errorf("contents of %s: %d bytes, %v; want the %d uploaded", u.ID, len(data), err, len(f.Data))
			}
		}
		if ms, _ := s.Machines(ctx); len(ms) != 1 || ms[0].Runs != 1 {
			t.Errorf("machines: %+v, want 1 run", ms)
		}
		if err := s.Reindex(ctx); err != nil {
			t.Fatal(err)
		}
		if n := points(); n != 1 {
			t.Errorf("%d points after a reindex, want 1", n)
		}
	})
}

// storedCopies counts the stored files that hold data's bytes in
// contents of their own.
func storedCopies(t *testing.T, s *Store, data []byte) int {
	t.Helper()
	rs, err := s.db.Query(`SELECT contents FROM files`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	n := 0
	for rs.Next() {
		var z []byte
		if err := rs.Scan(&z); err != nil {
			t.Fatal(err)
		}
		if got, err := inflate(z); err == nil && bytes.Equal(got, data) {
			n++
		}
	}
	return n
}

// TestContentRefusedAlike: what PostgreSQL cannot store is refused as
// invalid on every back end, before anything is stored.
func TestContentRefusedAlike(t *testing.T) {
	backends(t, func(t *testing.T, spec string) {
		s := open(t, spec)
		ctx := context.Background()
		good := nightlyFile("m1", "e1", 0, map[string]float64{"BenchmarkGet-2": 100}).Data
		for name, data := range map[string][]byte{
			"NUL":           append(append([]byte{}, good...), 0),
			"invalid UTF-8": append(append([]byte{}, good...), "# \xc3\x28\n"...),
			"zero time":     []byte("machine-id: m\nBenchmarkX 1 0 ns/op\n"),
		} {
			if _, err := s.Put(ctx, []payload.File{{Name: "a.txt", Data: data}}, ""); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if n := count(t, s, "uploads"); n != 0 {
			t.Errorf("%d uploads stored", n)
		}
	})
}

// TestBisectionsFromBeforeSchema7BecomeBisections: a bisection file that
// a schema-6 server stored and indexed as a run (its A/B's results in the
// series) is, after the upgrade, a bisection of its machine and no run:
// the machine's runs and the series' points are the nightly run's alone.
// On both back ends.
func TestBisectionsFromBeforeSchema7BecomeBisections(t *testing.T) {
	for _, from := range []int{5, 6} {
		t.Run(fmt.Sprintf("from%d", from), func(t *testing.T) { bisectionsBecomeBisections(t, from) })
	}
}

// bisectionsBecomeBisections stores a nightly run and a bisection as a
// server of schema from did, then opens the store.
func bisectionsBecomeBisections(t *testing.T, from int) {
	backends(t, func(t *testing.T, spec string) {
		ctx := context.Background()
		old, err := openAt(ctx, spec, from)
		if err != nil {
			t.Fatal(err)
		}
		run := nightlyFile("m1", "e1", 0, map[string]float64{"BenchmarkGet/impl=paged-2": 100})
		bis := payload.File{Name: "bisect.txt", Data: fmt.Appendf(nil, "machine-id: m1\nbisect-benchmark: BenchmarkGet/impl=paged-2\nbisect-unit: sec/op\n"+
			"bisect-good: %040x\nbisect-bad: %040x\nbisect-culprit: %040x\nbisect-share: 0.97\nbisect-functions: tiny.Work +25.0ns/op\nBenchmarkGet/impl=paged-2 1000 125 ns/op\n", 1, 2, 3)}
		for i, f := range []payload.File{run, bis} {
			// As a schema-5 or 6 server stored and indexed it.
			tx, _ := old.db.BeginTx(ctx, nil)
			var pk int64
			id := payload.UploadID([]payload.File{f})
			if err := tx.QueryRow(old.q(`INSERT INTO uploads (upload_id, content_hash, created, by_user, files, results) VALUES (?, ?, ?, '', 1, 1) RETURNING id`),
				id, payload.HashFiles([]payload.File{f}), time.Now().UnixNano()+int64(i)).Scan(&pk); err != nil {
				t.Fatal(err)
			}
			ps, err := validate([]payload.File{f})
			if err != nil {
				t.Fatal(err)
			}
			ps[0].prepare()
			fid, _, err := old.insertFile(ctx, tx, pk, 0, ps[0], 0, map[string]string{"upload": id})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(old.q(`UPDATE files SET upload_key = ?, data_hash = ? WHERE id = ?`), id, dataHash(f.Data), fid); err != nil {
				t.Fatal(err)
			}
			if err := newIndexer(old, from, false).file(ctx, tx, fid, f.Name, f.Data, time.Now()); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		if ms, _ := old.Machines(ctx); len(ms) != 1 || ms[0].Runs != 2 {
			t.Fatalf("at schema %d the bisection is a run: %+v", from, ms)
		}
		old.Close()
		s := open(t, spec)
		bs, err := s.Bisections(ctx, "m1")
		// Schema 12 fills in the functions from the file's labels.
		if err != nil || len(bs) != 1 || bs[0].Culprit != fmt.Sprintf("%040x", 3) || bs[0].Share != 0.97 || bs[0].Functions != "tiny.Work +25.0ns/op" {
			t.Errorf("bisections after the upgrade: %+v, %v", bs, err)
		}
		if ms, _ := s.Machines(ctx); len(ms) != 1 || ms[0].Runs != 1 {
			t.Errorf("machines after the upgrade: %+v (want one run: the nightly's)", ms)
		}
		if n := count(t, s, "points"); n != 1 {
			t.Errorf("%d points after the upgrade, want the nightly run's one", n)
		}
		checkCounts(t, s, "upgraded")
	})
}
