package read

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/harnesstest"
)

func BenchmarkOffloadReplay(b *testing.B) { harness.RunDefault(b, Family+"/OffloadReplay") }
func BenchmarkReadFloor(b *testing.B)     { harness.RunDefault(b, Family+"/ReadFloor") }
func BenchmarkReadNoop(b *testing.B)      { harness.RunDefault(b, Family+"/ReadNoop") }

// TestReplayParsesLessWithOffsets runs the replay briefly in process: the
// offset caches must cut the bytes parsed per entry (the work they save),
// and every mode must return entries.
func TestReplayParsesLessWithOffsets(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache", Bench: "OffloadReplay",
		Params: engine.Overrides{"entrySize": {"100"}},
		Warmup: result.IterSpec{Count: 1, Ops: 100}, Measure: result.IterSpec{Count: 1, Ops: 100}})
	parsed := map[string]float64{}
	for _, c := range cases {
		mode, _ := c.Case.Params.Get("offsets")
		it := c.Iterations[len(c.Iterations)-1]
		if it.Total.Ops != 2000 {
			t.Errorf("%s: %d entries, want 2000", c.Case.Name(), it.Total.Ops)
		}
		parsed[mode] = it.Total.Metrics["bytes-parsed/op"]
	}
	t.Logf("bytes parsed per entry: %v", parsed)
	if parsed["none"] < 10*parsed["handle"] || parsed["none"] < 10*parsed["shared"] || parsed["handle"] < 112 {
		t.Errorf("bytes parsed per entry %v: the caches should parse about one record (112 B) per entry, the uncached handle far more", parsed)
	}
}

func BenchmarkReadRange(b *testing.B) { harness.RunDefault(b, Family+"/ReadRange") }

func TestReadRangeHits(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache", Bench: "Read(AndCopy)?Range",
		Params:  engine.Overrides{"batchSize": {"100"}},
		Measure: result.IterSpec{Count: 1, Ops: 160}})
	for _, c := range cases {
		hit, _ := c.Case.Params.Get("hitPercent")
		got := c.Iterations[0].Total.Metrics["hits/op"]
		want := map[string]float64{"0": 0, "10": 10, "100": 100}[hit]
		if got != want {
			t.Errorf("%s: hits/op %v, want %v", c.Case.Name(), got, want)
		}
	}
}

func BenchmarkReadAndCopyRange(b *testing.B) { harness.RunDefault(b, Family+"/ReadAndCopyRange") }
