package chart_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/internal/chart"
)

func TestChartsDecode(t *testing.T) {
	dir := t.TempDir()
	bars := []chart.ChangeBar{{Name: "Insert/cachedEntries=1000", Change: -43, Lo: -50, Hi: -35}, {Name: "Read/hitPercent=10", Change: 5, Lo: -2, Hi: 9}}
	series := []float64{100, 101, 99, 100, 112, 111, 113, 112}
	for _, ext := range []string{".png", ".svg"} {
		cp, sp := filepath.Join(dir, "change"+ext), filepath.Join(dir, "series"+ext)
		if err := chart.WriteChangeChart(cp, "change", bars); err != nil {
			t.Fatal(err)
		}
		if err := chart.WriteSeriesChart(sp, "series", "sec/op", series, []int{4}); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{cp, sp} {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if ext == ".png" {
				img, err := png.Decode(bytes.NewReader(b))
				if err != nil || img.Bounds().Dx() < 200 || img.Bounds().Dy() < 200 {
					t.Errorf("%s: %v, %v", p, err, img)
				}
			} else if !strings.Contains(string(b), "<svg") {
				t.Errorf("%s is not SVG", p)
			}
		}
	}
	if err := chart.WriteChangeChart(filepath.Join(dir, "x.png"), "empty", nil); err == nil {
		t.Error("an empty chart was drawn")
	}
}

func TestSeriesSVGMarksChangesAndEnvironments(t *testing.T) {
	values := []float64{100, 101, 99, 100, 112, 111, 113, 112}
	plain, err := chart.SeriesSVG("s", "sec/op", values, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	marked, err := chart.SeriesSVG("s", "sec/op", values, []int{4}, []int{2})
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(marked)), "<?xml") || !strings.Contains(string(marked), "<svg") {
		t.Fatalf("not SVG: %v", err)
	}
	// Each mark is one more path than the plain chart has.
	if a, b := strings.Count(string(plain), "<path"), strings.Count(string(marked), "<path"); b != a+2 {
		t.Errorf("%d paths with two marks, %d without", b, a)
	}
	if _, err := chart.SeriesSVG("s", "sec/op", nil, nil, nil); err == nil {
		t.Error("an empty series drew a chart")
	}
}
