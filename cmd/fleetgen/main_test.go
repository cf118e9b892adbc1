package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"
)

// TestSmallFleet runs the generator at a small size and checks what it
// measured against what it planted.
func TestSmallFleet(t *testing.T) {
	c := config{spec: "sqlite:" + filepath.Join(t.TempDir(), "f.db"), machines: 3, benchmarks: 20, night: 40, checkpoints: []float64{0.5, 1}, seed: 1,
		out: filepath.Join(t.TempDir(), "out", "sqlite")}
	cps, err := run(context.Background(), c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 2 || cps[1].Runs != 120 || cps[1].Points != 2400 || cps[0].Nights != 20 {
		t.Fatalf("checkpoints: %+v", cps)
	}
	last := cps[1]
	// 3 machines × 3 recent steps, and the earlier steps that the 40
	// nights show on both sides: every one still stands.
	if last.PlantedOpen < 9 || last.PlantedOpenFound < last.PlantedOpen-1 || last.UnplantedOpenAlarms > 1 {
		t.Errorf("found %d of %d planted open regressions, %d others", last.PlantedOpenFound, last.PlantedOpen, last.UnplantedOpenAlarms)
	}
	if last.StoreBytes <= 0 || last.SeriesQueryMS.Median <= 0 || last.RegressionsPageMS.Median <= 0 || last.AnalyzedSeries != 60 {
		t.Errorf("measurements: %+v", last)
	}
	if err := write(c, cps); err != nil {
		t.Fatal(err)
	}
	if _, err := run(context.Background(), c, io.Discard); err == nil {
		t.Error("a second run filled a store that is not empty")
	}
	c.measureOnly = true
	again, err := run(context.Background(), c, io.Discard)
	if err != nil || len(again) != 1 || again[0].PlantedOpenFound != last.PlantedOpenFound || again[0].SeriesQueryMS.Median <= 0 {
		t.Errorf("measure-only: %+v, %v", again, err)
	}
	c.machines = 4
	if _, err := run(context.Background(), c, io.Discard); err == nil {
		t.Error("measure-only accepted a store of another fleet")
	}
}
