package report_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/perf/benchfmt"

	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func header() report.Header {
	return report.Header{
		GOOS: "linux", GOARCH: "amd64", CPU: "Test CPU @ 2.40GHz", Go: "go1.26.8",
		BenchctlVersion: "0.1.0", Machine: "testhost", MachineID: "0123456789ab", EnvID: "ba9876543210",
		HostPinned: "no", HostNote: "test header", Commit: "0000000000000000000000000000000000000000",
		CommitTime: "2026-11-30T00:00:00Z", Dirty: "no", Command: "benchctl run --suite self",
		Started: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
	}
}

func hist(t *testing.T, values ...int64) []byte {
	h := hdrhistogram.New(1, int64(time.Hour), 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bench is a case of a package outside this repository: its pkg key and
// JMH name come from that package.
func bench(name string, params ...result.ParamValue) result.Case {
	return result.Case{Benchmark: "Benchmark" + name, ID: "fixture/" + name, Family: "fixture",
		Pkg: "example.com/userproj/internal/bench", Params: params,
		Units: []result.Unit{{Unit: "hits/op", Better: "higher"}}}
}

// fixtureRun is a run with one case per mode, a group and a failure.
func fixtureRun(t *testing.T) *result.Run {
	o := result.Config{Forks: 2, Warmup: result.IterSpec{Count: 3, Time: time.Second}, Measure: result.IterSpec{Count: 5, Time: time.Second},
		Seed: 1, Timeout: 10 * time.Minute}
	iter := func(fork, index int, warm bool, ns float64, ops int64) result.Iteration {
		return result.Iteration{
			Fork: fork, Index: index, Warmup: warm, WallNs: 1_000_000_000, Executed: ops + 10,
			Total:      result.OpStats{Workers: 1, Ops: ops, NsPerOp: ns, OpsPerSec: 1e9 / ns, Metrics: map[string]float64{"hits/op": 0.5}},
			AllocBytes: uint64(64 * (ops + 10)), Allocs: uint64(ops + 10), GCs: 3,
			ProbeBefore: 2400, ProbeAfter: 2410, Flagged: index == 1 && fork == 2,
		}
	}
	avgt := &result.CaseResult{Case: bench("Insert", result.ParamValue{Name: "impl", Value: "paged"}), Mode: result.AverageTime}
	avgt.Startup = []time.Duration{3 * time.Millisecond, 4 * time.Millisecond}
	avgt.Ready = []time.Duration{30 * time.Millisecond, 31 * time.Millisecond}
	thrpt := &result.CaseResult{Case: bench("Read"), Mode: result.Throughput}
	for f := 1; f <= 2; f++ {
		avgt.Iterations = append(avgt.Iterations, iter(f, 0, true, 500, 100))
		thrpt.Iterations = append(thrpt.Iterations, iter(f, 0, true, 50, 1000))
		for i := 0; i < 3; i++ {
			avgt.Iterations = append(avgt.Iterations, iter(f, i, false, 100+float64(10*i+f), 1000))
			thrpt.Iterations = append(thrpt.Iterations, iter(f, i, false, 20+float64(i+f), 5000))
		}
	}
	sample := &result.CaseResult{Case: bench("Get"), Mode: result.SampleTime}
	for i := 0; i < 2; i++ {
		it := iter(1, i, false, 150, 4)
		it.Total.Hist = hist(t, 100, 120, 150, 230+int64(i))
		it.TimerNs = 30
		sample.Iterations = append(sample.Iterations, it)
	}
	group := &result.CaseResult{Case: bench("CatchUp"), Mode: result.AverageTime}
	for i := 0; i < 3; i++ {
		it := iter(1, i, false, 40, 3000)
		it.Total.Workers = 3
		it.Ops = []result.OpStats{
			{Name: "tailInsert", Workers: 1, Ops: 1000, NsPerOp: 60 + float64(i)},
			{Name: "catchUpInsertRun", Workers: 2, Ops: 2000, NsPerOp: 30, Metrics: map[string]float64{"hits/op": 0.75}},
		}
		group.Iterations = append(group.Iterations, it)
	}
	failed := &result.CaseResult{Case: bench("Broken"), Mode: result.AverageTime,
		Failures: []*result.ForkError{{Benchmark: "BenchmarkBroken", Fork: 1, Phase: "op", Message: "panic: boom", Exit: "exit status 1", Tail: []string{"goroutine 7 [running]:", "benchctl child: op: panic: boom"}}}}
	return &result.Run{Config: o, Cases: []*result.CaseResult{avgt, thrpt, sample, group, failed}}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

func TestBenchfmtGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteBenchfmt(&buf, header(), fixtureRun(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "bench.txt", buf.Bytes())

	// benchfmt reads every line: 6 avgt + 6 thrpt + 2 sample + 3×3 group results.
	r := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "bench.txt")
	results, units := 0, 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			results++
			if string(rec.GetConfig("pkg")) != "example.com/userproj/internal/bench" || string(rec.GetConfig("host-pinned")) != "no" {
				t.Errorf("%s: config pkg=%s host-pinned=%s", rec.Name.Full(), rec.GetConfig("pkg"), rec.GetConfig("host-pinned"))
			}
		case *benchfmt.UnitMetadata:
			units++
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if results != 6+6+2+9 || units != 2 {
		t.Errorf("read %d results and %d unit lines, want 23 and 2", results, units)
	}
}

func TestBenchstatReadsBenchTxt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds benchstat")
	}
	var buf bytes.Buffer
	if err := report.WriteBenchfmt(&buf, header(), fixtureRun(t)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "tool", "benchstat", path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool benchstat: %v\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("benchstat warned:\n%s", stderr.String())
	}
	for _, want := range []string{"Insert/impl=paged", "CatchUp/op=tailInsert", "sec/op", "ops/s", "hits/op"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("benchstat output lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestJMHGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteJMH(&buf, header(), fixtureRun(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "bench.json", buf.Bytes())

	var results []struct {
		Benchmark     string            `json:"benchmark"`
		Mode          string            `json:"mode"`
		Forks         int               `json:"forks"`
		Params        map[string]string `json:"params"`
		PrimaryMetric struct {
			Score            json.RawMessage            `json:"score"`
			ScoreError       json.RawMessage            `json:"scoreError"`
			ScorePercentiles map[string]json.RawMessage `json:"scorePercentiles"`
			ScoreUnit        string                     `json:"scoreUnit"`
			RawData          [][]float64                `json:"rawData"`
		} `json:"primaryMetric"`
		SecondaryMetrics map[string]json.RawMessage `json:"secondaryMetrics"`
	}
	if err := json.Unmarshal(buf.Bytes(), &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 4 {
		t.Fatalf("%d results, want 4 (the failed case has none)", len(results))
	}
	insert := results[0]
	var score float64
	json.Unmarshal(insert.PrimaryMetric.Score, &score)
	// mean of 101,111,121 (fork 1) and 102,112,122 (fork 2)
	if insert.Benchmark != "example.com/userproj/internal/bench.Insert" || insert.Forks != 2 || insert.Params["impl"] != "paged" || math.Abs(score-111.5) > 1e-9 || len(insert.PrimaryMetric.RawData) != 2 {
		t.Errorf("insert: %+v score %v", insert, score)
	}
	if _, ok := insert.SecondaryMetrics["·B/op"]; !ok {
		t.Errorf("no ·B/op secondary metric: %v", insert.SecondaryMetrics)
	}
	if string(results[2].PrimaryMetric.ScoreError) != `"NaN"` {
		t.Errorf("sample (2 values) scoreError = %s, want \"NaN\"", results[2].PrimaryMetric.ScoreError)
	}
	if p := string(results[2].PrimaryMetric.ScorePercentiles["100.0"]); p != "231" && p != "230" {
		t.Errorf("sample p100 = %s, want the largest latency", p)
	}
	if _, ok := results[3].SecondaryMetrics["tailInsert"]; !ok {
		t.Errorf("group op tailInsert is not a secondary metric: %v", results[3].SecondaryMetrics)
	}
}

func TestConsoleTable(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteTable(&buf, fixtureRun(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "table.txt", buf.Bytes())
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bench.txt")
	if err := report.WriteFileAtomic(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteFileAtomic(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if string(b) != "two" || len(entries) != 1 {
		t.Errorf("content %q, %d files in dir; want \"two\" and no temporary left", b, len(entries))
	}
	if err := report.WriteFileAtomic(filepath.Join(dir, "missing", "x"), nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	if err := report.CheckWritable(filepath.Join(path, "sub")); err == nil {
		t.Error("CheckWritable accepted a path under a file")
	}
}

// TestLongForkOrderStaysReadable: the A/B order of a calibration names
// thousands of forks; it is written over lines that benchfmt (and so
// benchstat), whose lines end at 64 KiB, reads, and names every fork
// once.
func TestLongForkOrderStaysReadable(t *testing.T) {
	a, b := fixtureRun(t), fixtureRun(t)
	for round := 1; round <= 2500; round++ {
		a.Order = append(a.Order, fmt.Sprintf("%d:BenchmarkAlloc/size=1024:B,A", round), fmt.Sprintf("%d:BenchmarkSpin/extra=5:A,B", round))
	}
	var buf bytes.Buffer
	if err := report.WriteSides(&buf, []report.Side{{Header: header(), Run: a}, {Header: header(), Run: b}}); err != nil {
		t.Fatal(err)
	}
	named := 0
	for line := range strings.SplitSeq(buf.String(), "\n") {
		if len(line) >= 64<<10 {
			t.Fatalf("a line of %d bytes", len(line))
		}
		if strings.Contains(line, "A/B fork order") {
			named += strings.Count(line, ":B,A") + strings.Count(line, ":A,B")
		}
	}
	if named != 5000 {
		t.Errorf("the order names %d forks, want 5000", named)
	}
	r := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "ab.txt")
	results := 0
	for r.Scan() {
		if _, ok := r.Result().(*benchfmt.Result); ok {
			results++
		}
	}
	if err := r.Err(); err != nil || results != 2*23 {
		t.Errorf("benchfmt read %d results, want 46; error %v", results, err)
	}
}
