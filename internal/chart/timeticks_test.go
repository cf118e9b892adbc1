package chart

import (
	"strings"
	"testing"
	"time"
)

// TestTimeAxis: a time axis is marked at calendar boundaries in a step of
// at most 8 labels, as precise as the span needs (runs seconds apart read
// apart), the first label with the year; the chart's text is in a
// sans-serif font like the pages around it.
func TestTimeAxis(t *testing.T) {
	base := time.Date(2026, 12, 3, 17, 55, 7, 0, time.UTC)
	for _, tc := range []struct {
		span        time.Duration
		first, each string // the first label, a later one's layout
	}{
		{40 * time.Second, "2026-12-03 17:55:10", "15:04:05"},
		{3 * time.Hour, "2026-12-03 18:00", "15:04"},
		{10 * 24 * time.Hour, "2026-12-05", "01-02"},     // every second day
		{2 * 365 * 24 * time.Hour, "2027-01", "2006-01"}, // quarters
		{30 * 365 * 24 * time.Hour, "2030", "2006"},      // five years
	} {
		lo, hi := float64(base.Unix()), float64(base.Add(tc.span).Unix())
		ticks := timeTicks{}.Ticks(lo, hi)
		if len(ticks) < 2 || len(ticks) > maxTimeTicks {
			t.Errorf("%v: %d ticks %v", tc.span, len(ticks), ticks)
			continue
		}
		if ticks[0].Label != tc.first {
			t.Errorf("%v: first label %q, want %q", tc.span, ticks[0].Label, tc.first)
		}
		seen := map[string]bool{}
		for i, tk := range ticks {
			if tk.Value < lo || tk.Value > hi || seen[tk.Label] {
				t.Errorf("%v: tick %d %+v outside the span or repeated", tc.span, i, tk)
			}
			seen[tk.Label] = true
			if i > 0 {
				if _, err := time.Parse(tc.each, tk.Label); err != nil {
					t.Errorf("%v: label %q is not %s", tc.span, tk.Label, tc.each)
				}
			}
		}
	}
	at := []time.Time{base, base.Add(20 * time.Second), base.Add(40 * time.Second)}
	svg, err := SeriesSVG("BenchmarkX", "sec/op", at, []float64{1e-6, 1.1e-6, 1e-6}, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(svg); !strings.Contains(s, "font-family:'Liberation Sans',system-ui,sans-serif;") || strings.Contains(s, "Serif") || !strings.Contains(s, ">17:55:20<") && !strings.Contains(s, "17:55:20") {
		t.Errorf("the chart's fonts or labels:\n%.1500s", s)
	}
}
