package chart_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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
	values := []float64{100e-9, 101e-9, 99e-9, 100e-9, 112e-9, 111e-9, 113e-9, 112e-9}
	at := make([]time.Time, len(values))
	for i := range at {
		at[i] = time.Date(2026, 11, 20+i, 2, 0, 0, 0, time.UTC)
	}
	plain, err := chart.SeriesSVG("s", "sec/op", at, values, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	marked, err := chart.SeriesSVG("s", "sec/op", at, values, nil, []int{4}, []int{2}, nil)
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(marked)), "<?xml") || !strings.Contains(string(marked), "<svg") {
		t.Fatalf("not SVG: %v", err)
	}
	// Each mark is one more path than the plain chart has.
	if a, b := strings.Count(string(plain), "<path"), strings.Count(string(marked), "<path"); b != a+2 {
		t.Errorf("%d paths with two marks, %d without", b, a)
	}
	// The axes read as the tables do: scaled values, and dates at
	// midnights, the first with its year.
	for _, want := range []string{`>1[01]\d(\.\d)?n<`, `>2026-11-2\d<`, `>11-2\d<`, `time \(UTC\)`} {
		if !regexp.MustCompile(want).Match(plain) {
			t.Errorf("the chart lacks %s", want)
		}
	}
	if strings.Contains(string(plain), "e-07") {
		t.Error("the value axis reads in exponents")
	}
	// Tooltips: a dot over each point with a tip, its <title> escaped,
	// later points to the right and the higher values above (the
	// canvas's group reads from the bottom left).
	tips := make([]string, len(values))
	for i := range tips {
		tips[i] = fmt.Sprintf("commit %d <b>", i)
	}
	tipped, err := chart.SeriesSVG("s", "sec/op", at, values, nil, []int{4}, nil, tips)
	if err != nil {
		t.Fatal(err)
	}
	dots := regexp.MustCompile(`<circle cx="([\d.]+)" cy="([\d.]+)" r="4" fill="transparent"><title>commit (\d) &lt;b&gt;</title></circle>`).FindAllSubmatch(tipped, -1)
	if len(dots) != len(values) || !bytes.Contains(tipped, []byte("</circle>\n</g>\n</g>\n</svg>")) {
		t.Fatalf("%d tooltips for %d points, or not in the canvas's group:\n%s", len(dots), len(values), tipped)
	}
	num := func(b []byte) float64 { v, _ := strconv.ParseFloat(string(b), 64); return v }
	// Each dot is on its point: a vertex of the series' line.
	line := regexp.MustCompile(`<path d="M([^"]*)" style="fill:none;stroke:#000000" />`).FindSubmatch(tipped)
	if line == nil {
		t.Fatal("no series line in the chart")
	}
	for i, xy := range strings.Split(string(line[1]), "L") {
		x, y, _ := strings.Cut(xy, ",")
		if i >= len(dots) || math.Abs(num([]byte(x))-num(dots[i][1])) > 0.01 || math.Abs(num([]byte(y))-num(dots[i][2])) > 0.01 {
			t.Errorf("point %d drawn at %s, its tooltip's dot elsewhere", i, xy)
		}
	}
	for i := 1; i < len(dots); i++ {
		if num(dots[i][1]) <= num(dots[i-1][1]) || string(dots[i][3]) != strconv.Itoa(i) {
			t.Errorf("tooltip %d at x %s after x %s", i, dots[i][1], dots[i-1][1])
		}
	}
	if num(dots[6][2]) <= num(dots[2][2]) { // 113n above 99n
		t.Errorf("the highest value's dot at y %s, the lowest's at %s", dots[6][2], dots[2][2])
	}
	// The forks' band: one shaded polygon for each stretch of runs whose
	// range is known (runs 3 and 4 stored before it was kept).
	band := &chart.Band{Lo: make([]float64, len(values)), Hi: make([]float64, len(values))}
	for i, v := range values {
		if i != 3 && i != 4 {
			band.Lo[i], band.Hi[i] = v*0.98, v*1.02
		}
	}
	banded, err := chart.SeriesSVG("s", "sec/op", at, values, band, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	shade := regexp.MustCompile(`<path d="M[^"]*Z" style="fill:#[0-9A-Fa-f]{6};fill-opacity:0\.19[0-9]*"`)
	if n, m := len(shade.FindAll(banded, -1)), len(shade.FindAll(plain, -1)); n != 2 || m != 0 {
		t.Errorf("%d shaded stretches with the band (want 2), %d without", n, m)
	}
	if _, err := chart.SeriesSVG("s", "sec/op", nil, nil, nil, nil, nil, nil); err == nil {
		t.Error("an empty series drew a chart")
	}
}

// TestSeriesSVGOfAnyNameIsXML: a name with NUL, control characters,
// markup and invalid UTF-8 still makes a well-formed SVG document.
func TestSeriesSVGOfAnyNameIsXML(t *testing.T) {
	name := "Benchmark\x00A\x01<b>&\\\xff\x1b[31m" + strings.Repeat("x", 300)
	svg, err := chart.SeriesSVG(name, "sec/op\x00", []time.Time{time.Unix(1e9, 0), time.Unix(1e9+60, 0)}, []float64{1e-7, 2e-7}, nil, []int{1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("chart of %q is not XML: %v", name, err)
		}
	}
}
