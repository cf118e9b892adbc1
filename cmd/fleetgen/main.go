// Command fleetgen measures a results store at fleet scale: it generates
// the nightly runs of a fleet (by default 50 machines × 300 benchmarks ×
// 730 nights, about 11 million points), uploads them night by night
// through the store's own upload path, and at checkpoints measures the
// upload throughput, the latency of a series query and of a machine's
// regressions page (both through the server's HTTP handler), the store's
// size and the time to analyze the new points. It writes the figures as
// JSON and Markdown.
//
//	go run ./cmd/fleetgen --store sqlite:/tmp/fleet.db --out results/store-scale/sqlite
//	go run ./cmd/fleetgen --store postgres://bench@127.0.0.1:5432/fleet --out results/store-scale/postgres
//
// With --load N it serves a filled store to N readers of the home page
// and /healthz and a small writer, alone and then beside the largest
// uploads the server accepts, and prints what each waited.
//
// Every series has 1 % noise between nights and 0.3 % between forks.
// Three series per machine get a +15 % step four nights before the end,
// five more a step at a random earlier night: open regressions to find
// (new, or standing) once the runs analyzed hold both levels,
// and every fifth machine changes its env-id in the middle, with a level
// shift on a fifth of its series.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/server"
	"github.com/ledgerbench/ledgerbench/internal/store"
)

type config struct {
	spec                        string
	machines, benchmarks, night int
	checkpoints                 []float64
	out                         string
	seed                        uint64
	measureOnly                 bool
}

// Checkpoint is the store measured after some nights.
type Checkpoint struct {
	Nights, Runs        int
	Points              int64
	UploadSeconds       float64 // uploading the nights since the last checkpoint
	UploadsPerSecond    float64
	PointsPerSecond     float64
	AnalyzeSeconds      float64
	AnalyzedSeries      int
	SeriesQueryMS       Latency
	SeriesStoreMS       Latency
	RegressionsPageMS   Latency
	StoreBytes          int64
	BytesPerRun         float64
	OpenRegressions     int
	PlantedOpenFound    int
	PlantedOpen         int
	UnplantedOpenAlarms int
}

// Latency is milliseconds: median, 95th percentile and maximum.
type Latency struct{ Median, P95, Max float64 }

func main() {
	var c config
	var cps string
	flag.StringVar(&c.spec, "store", "", "the store to fill: sqlite:PATH or postgres://… (it must be empty)")
	flag.IntVar(&c.machines, "machines", 50, "machines")
	flag.IntVar(&c.benchmarks, "benchmarks", 300, "benchmarks per machine")
	flag.IntVar(&c.night, "nights", 730, "nightly runs per machine")
	flag.StringVar(&cps, "checkpoints", "0.125,0.25,0.5,1", "fractions of the nights after which to measure")
	flag.StringVar(&c.out, "out", "", "write OUT.json and OUT.md")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the generated values")
	flag.BoolVar(&c.measureOnly, "measure-only", false, "measure a store this command filled before (same --machines, --benchmarks, --nights and --seed) without uploading")
	largest := flag.Bool("largest-upload", false, "instead: store the largest upload the server accepts (20,000 benchmarks, 32 MiB) while small uploads are put beside it, and print how long each took")
	load := flag.Int("load", 0, "instead: serve the store with N readers asking for the home page and /healthz, first alone for --quiet, then while the largest upload by bytes and the largest by files are posted, and print what the readers waited")
	quiet := flag.Duration("quiet", 10*time.Second, "with --load: how long the readers ask before the uploads")
	flag.Parse()
	if *load > 0 && c.spec != "" {
		phases, err := measureLoad(context.Background(), c.spec, *load, *quiet)
		if err == nil {
			err = writeLoad(os.Stdout, c.spec, *load, phases)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleetgen:", err)
			os.Exit(1)
		}
		return
	}
	if *largest && c.spec != "" {
		if err := measureLargest(context.Background(), c.spec, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "fleetgen:", err)
			os.Exit(1)
		}
		return
	}
	if c.spec == "" || c.machines < 1 || c.benchmarks < 10 || c.night < 20 {
		fmt.Fprintln(os.Stderr, "fleetgen: want --store, and at least 1 machine, 10 benchmarks and 20 nights")
		os.Exit(2)
	}
	for _, f := range strings.Split(cps, ",") {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v <= 0 || v > 1 {
			fmt.Fprintf(os.Stderr, "fleetgen: checkpoint %q: want a fraction in (0, 1]\n", f)
			os.Exit(2)
		}
		c.checkpoints = append(c.checkpoints, v)
	}
	res, err := run(context.Background(), c, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetgen:", err)
		os.Exit(1)
	}
	if c.out != "" {
		if err := write(c, res); err != nil {
			fmt.Fprintln(os.Stderr, "fleetgen:", err)
			os.Exit(1)
		}
	}
}

// fleet is the generated truth.
type fleet struct {
	c        config
	names    []string // benchmark names
	pkgs     []string
	base     [][]float64 // [machine][bench] ns/op
	stepAt   [][]int     // [machine][bench]: night of a planted step, or -1
	envAt    []int       // [machine]: night of its env-id change, or -1
	envShift [][]bool
}

func newFleet(c config) *fleet {
	rng := rand.New(rand.NewPCG(c.seed, 7))
	f := &fleet{c: c}
	for b := 0; b < c.benchmarks; b++ {
		f.pkgs = append(f.pkgs, fmt.Sprintf("example.com/fleet/pkg%02d", b/10))
		f.names = append(f.names, fmt.Sprintf("BenchmarkOp%d/impl=%s/size=%d-8", b%10, []string{"paged", "skiplist", "btree"}[b%3], 8<<(b%5)))
	}
	for m := 0; m < c.machines; m++ {
		speed := 0.7 + 0.6*rng.Float64()
		var base []float64
		steps := make([]int, c.benchmarks)
		shift := make([]bool, c.benchmarks)
		for b := range steps {
			base = append(base, speed*math.Exp(3+4*rng.Float64()))
			steps[b] = -1
			shift[b] = rng.IntN(5) == 0
		}
		perm := rng.Perm(c.benchmarks)
		for _, b := range perm[:3] {
			steps[b] = c.night - 4
		}
		for _, b := range perm[3:8] {
			steps[b] = 10 + rng.IntN(max(1, c.night-30))
		}
		env := -1
		if m%5 == 4 {
			env = c.night / 2
		}
		f.base, f.stepAt, f.envAt, f.envShift = append(f.base, base), append(f.stepAt, steps), append(f.envAt, env), append(f.envShift, shift)
	}
	return f
}

func machineID(m int) string { return fmt.Sprintf("fleet%02d-%08x", m, uint32(m)*2654435761) }

// file is machine m's run of night n, as benchctl nightly writes it: 3
// forks of one iteration each.
func (f *fleet) file(m, n int, rng *rand.Rand) payload.File {
	env := "env-a"
	if f.envAt[m] >= 0 && n >= f.envAt[m] {
		env = "env-b"
	}
	at := time.Date(2025, 1, 1, 2, 0, 0, 0, time.UTC).AddDate(0, 0, n).Add(time.Duration(m) * time.Minute)
	var b strings.Builder
	b.Grow(f.c.benchmarks * 3 * 110)
	fmt.Fprintf(&b, "# benchctl: made by `benchctl nightly` at %s; raw output, not edited\n", at.Format("2006-01-02T15:04:05Z"))
	fmt.Fprintf(&b, "goos: linux\ngoarch: amd64\ncpu: Fleet CPU %d\ngo: go1.26.8\nbenchctl-version: 0.1.0\nmachine: box%02d\nmachine-id: %s\nenv-id: %s\nhost-pinned: yes\ncommit: %040x\ncommit-time: %s\ndirty: no\n",
		m%4, m, machineID(m), env, uint64(n)*0x9e3779b97f4a7c15, at.Add(-time.Hour).Format(time.RFC3339))
	pkg := ""
	for i, name := range f.names {
		if f.pkgs[i] != pkg {
			pkg = f.pkgs[i]
			fmt.Fprintf(&b, "pkg: %s\n", pkg)
		}
		v := f.base[m][i] * (1 + 0.01*rng.NormFloat64())
		if s := f.stepAt[m][i]; s >= 0 && n >= s {
			v *= 1.15
		}
		if env == "env-b" && f.envShift[m][i] {
			v *= 0.9
		}
		for k := 1; k <= 3; k++ {
			fmt.Fprintf(&b, "%s 100000 %.2f ns/op\n# benchctl: fork=%d iter=0\n", name, v*(1+0.003*rng.NormFloat64()), k)
		}
	}
	return payload.File{Name: at.Format("20060102T150405Z") + ".txt", Data: []byte(b.String())}
}

func run(ctx context.Context, c config, log io.Writer) ([]Checkpoint, error) {
	st, err := store.Open(ctx, c.spec)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	f := newFleet(c)
	hs := httptest.NewServer((&server.Server{Store: st}).Handler())
	defer hs.Close()
	rng := rand.New(rand.NewPCG(c.seed, 11))
	ms, err := st.Machines(ctx)
	if c.measureOnly {
		if err != nil || len(ms) != c.machines || ms[0].Runs != c.night {
			return nil, fmt.Errorf("%s does not hold %d machines of %d runs (%d machines, %v)", st, c.machines, c.night, len(ms), err)
		}
		cp := Checkpoint{Nights: c.night, Runs: c.night * c.machines, Points: int64(c.night * c.machines * c.benchmarks)}
		if err := measure(ctx, c, f, st, hs.URL, rng, &cp); err != nil {
			return nil, err
		}
		return []Checkpoint{cp}, nil
	}
	if err != nil || len(ms) > 0 {
		return nil, fmt.Errorf("%s is not empty (or unreadable: %v)", st, err)
	}
	var out []Checkpoint
	night := 0
	for _, frac := range c.checkpoints {
		until := int(math.Round(frac * float64(c.night)))
		start := time.Now()
		runs := 0
		for ; night < until; night++ {
			for m := 0; m < c.machines; m++ {
				if _, err := st.Put(ctx, []payload.File{f.file(m, night, rng)}, "fleetgen"); err != nil {
					return out, fmt.Errorf("night %d machine %d: %w", night, m, err)
				}
				runs++
			}
			if night%50 == 49 {
				fmt.Fprintf(log, "fleetgen: night %d of %d, %.0f runs/s\n", night+1, c.night, float64(runs)/time.Since(start).Seconds())
			}
		}
		cp := Checkpoint{Nights: night, Runs: night * c.machines, Points: int64(night * c.machines * c.benchmarks)}
		cp.UploadSeconds = time.Since(start).Seconds()
		cp.UploadsPerSecond = float64(runs) / cp.UploadSeconds
		cp.PointsPerSecond = cp.UploadsPerSecond * float64(c.benchmarks)
		start = time.Now()
		if cp.AnalyzedSeries, err = st.Analyze(ctx, ""); err != nil {
			return out, err
		}
		cp.AnalyzeSeconds = time.Since(start).Seconds()
		if err := measure(ctx, c, f, st, hs.URL, rng, &cp); err != nil {
			return out, err
		}
		fmt.Fprintf(log, "fleetgen: %d nights (%d runs, %d points): upload %.1f runs/s, analyze %.0f s, series %.1f ms, regressions page %.1f ms, %.0f bytes/run\n",
			cp.Nights, cp.Runs, cp.Points, cp.UploadsPerSecond, cp.AnalyzeSeconds, cp.SeriesQueryMS.Median, cp.RegressionsPageMS.Median, cp.BytesPerRun)
		out = append(out, cp)
	}
	return out, nil
}

func measure(ctx context.Context, c config, f *fleet, st *store.Store, base string, rng *rand.Rand, cp *Checkpoint) error {
	var httpMS, storeMS, pageMS []float64
	for i := 0; i < 60; i++ {
		m, b := rng.IntN(c.machines), rng.IntN(c.benchmarks)
		k := store.SeriesKey{Machine: machineID(m), Pkg: f.pkgs[b], Benchmark: f.names[b], Unit: "sec/op"}
		t0 := time.Now()
		ser, err := st.Series(ctx, k)
		if err != nil {
			return err
		}
		storeMS = append(storeMS, ms(time.Since(t0)))
		if len(ser.Points) != cp.Nights {
			return fmt.Errorf("series %v: %d points, want %d", k, len(ser.Points), cp.Nights)
		}
		q := url.Values{"machine": {k.Machine}, "pkg": {k.Pkg}, "benchmark": {k.Benchmark}, "unit": {k.Unit}}
		d, err := timeGet(base + "/api/series?" + q.Encode())
		if err != nil {
			return err
		}
		httpMS = append(httpMS, d)
	}
	for i := 0; i < 20; i++ {
		d, err := timeGet(base + "/machine/" + machineID(rng.IntN(c.machines)))
		if err != nil {
			return err
		}
		pageMS = append(pageMS, d)
	}
	cp.SeriesQueryMS, cp.SeriesStoreMS, cp.RegressionsPageMS = latency(httpMS), latency(storeMS), latency(pageMS)
	size, err := storeSize(ctx, c.spec)
	if err != nil {
		return err
	}
	cp.StoreBytes, cp.BytesPerRun = size, float64(size)/float64(cp.Runs)
	// What the regressions pages list as open, against what was planted.
	for m := 0; m < c.machines; m++ {
		regs, err := st.Regressions(ctx, machineID(m), 0)
		if err != nil {
			return err
		}
		// A step is an open regression to find once four runs show it
		// (the change-point search's smallest segment) on either side,
		// within the runs analyzed: it is never undone, so it stands.
		planted := map[[2]string]bool{}
		for b, s := range f.stepAt[m] {
			if s >= 0 && s <= cp.Nights-4 && s >= max(4, cp.Nights-store.AnalysisWindow+4) {
				planted[[2]string{f.pkgs[b], f.names[b]}] = true
			}
		}
		cp.PlantedOpen += len(planted)
		for _, r := range regs {
			if !r.Open {
				continue
			}
			cp.OpenRegressions++
			if planted[[2]string{r.Pkg, r.Benchmark}] {
				cp.PlantedOpenFound++
			} else {
				cp.UnplantedOpenAlarms++
			}
		}
	}
	return nil
}

func timeGet(u string) (float64, error) {
	t0 := time.Now()
	resp, err := http.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	if resp.StatusCode != 200 {
		return 0, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return ms(time.Since(t0)), nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func latency(xs []float64) Latency {
	sort.Float64s(xs)
	at := func(q float64) float64 { return xs[min(len(xs)-1, int(q*float64(len(xs))))] }
	return Latency{Median: at(0.5), P95: at(0.95), Max: xs[len(xs)-1]}
}

// storeSize is the database's size on disk: the SQLite file with its
// write-ahead log, or pg_database_size.
func storeSize(ctx context.Context, spec string) (int64, error) {
	if path, ok := strings.CutPrefix(spec, "sqlite:"); ok {
		var total int64
		for _, p := range []string{path, path + "-wal"} {
			if st, err := os.Stat(p); err == nil {
				total += st.Size()
			}
		}
		return total, nil
	}
	db, err := sql.Open("pgx", spec)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&n)
	return n, err
}

func write(c config, cps []Checkpoint) error {
	if err := os.MkdirAll(filepath.Dir(c.out), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(map[string]any{"store": strings.SplitN(c.spec, ":", 2)[0], "machines": c.machines, "benchmarks": c.benchmarks, "nights": c.night, "checkpoints": cps}, "", "  ")
	if err := os.WriteFile(c.out+".json", append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# %s store: %d machines × %d benchmarks × %d nights\n\n", strings.SplitN(c.spec, ":", 2)[0], c.machines, c.benchmarks, c.night)
	how := ""
	if c.measureOnly {
		how = " --measure-only"
	}
	fmt.Fprintf(&md, "Made by `go run ./cmd/fleetgen --store %s --machines %d --benchmarks %d --nights %d%s` on %s.\n\n",
		strings.SplitN(c.spec, ":", 2)[0]+":…", c.machines, c.benchmarks, c.night, how, time.Now().UTC().Format("2006-01-02"))
	md.WriteString("| nights | runs | points | upload runs/s | points/s | analyze s (series) | series query ms (median / p95) | store call ms (median) | regressions page ms (median / p95) | store MB | bytes/run | open found / planted | other open |\n")
	md.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, cp := range cps {
		planted := "–"
		if cp.PlantedOpen > 0 {
			planted = fmt.Sprintf("%d / %d", cp.PlantedOpenFound, cp.PlantedOpen)
		}
		upload, analyze := "–", "–"
		if cp.UploadSeconds > 0 {
			upload = fmt.Sprintf("%.1f | %.0f", cp.UploadsPerSecond, cp.PointsPerSecond)
			analyze = fmt.Sprintf("%.0f (%d)", cp.AnalyzeSeconds, cp.AnalyzedSeries)
		} else {
			upload = "– | –"
		}
		fmt.Fprintf(&md, "| %d | %d | %d | %s | %s | %.1f / %.1f | %.1f | %.1f / %.1f | %.0f | %.0f | %s | %d |\n",
			cp.Nights, cp.Runs, cp.Points, upload, analyze,
			cp.SeriesQueryMS.Median, cp.SeriesQueryMS.P95, cp.SeriesStoreMS.Median, cp.RegressionsPageMS.Median, cp.RegressionsPageMS.P95,
			float64(cp.StoreBytes)/1e6, cp.BytesPerRun, planted, cp.UnplantedOpenAlarms)
	}
	return os.WriteFile(c.out+".md", []byte(md.String()), 0o644)
}
