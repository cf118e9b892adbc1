package chart

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/perf/benchunit"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ChangeBar is one benchmark of a change chart, in percent: the row of
// compare's Tables.ChangeBars.
type ChangeBar = compare.Bar

type whiskers []ChangeBar

func (w whiskers) Len() int                    { return len(w) }
func (w whiskers) XY(i int) (float64, float64) { return float64(i), w[i].Change }
func (w whiskers) YError(i int) (low, high float64) {
	return w[i].Change - w[i].Lo, w[i].Hi - w[i].Change
}
func (w whiskers) Value(i int) float64 { return w[i].Change }
func (w whiskers) names() (out []string) {
	for _, b := range w {
		out = append(out, b.Name)
	}
	return out
}

// WriteChangeChart draws the summary chart of the upstream pull requests: the change of each
// benchmark as a bar, with whiskers from its slowest to its fastest
// comparison of runs, to path (.svg or .png).
func WriteChangeChart(path, title string, bars []ChangeBar) error {
	if len(bars) == 0 {
		return fmt.Errorf("chart %s: nothing to draw", path)
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "change (%)"
	w := whiskers(bars)
	bc, err := plotter.NewBarChart(w, vg.Points(18))
	if err != nil {
		return err
	}
	bc.Color = color.RGBA{R: 70, G: 110, B: 180, A: 255}
	eb, err := plotter.NewYErrorBars(w)
	if err != nil {
		return err
	}
	zero, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 0}, {X: float64(len(bars)) - 0.5, Y: 0}})
	if err != nil {
		return err
	}
	zero.Color = color.Gray{Y: 120}
	p.Add(bc, eb, zero, plotter.NewGrid())
	p.NominalX(w.names()...)
	p.X.Tick.Label.Rotation = 0.5
	p.X.Tick.Label.XAlign = -1
	p.X.Tick.Label.YAlign = -0.5
	return save(p, path, vg.Length(max(len(bars), 4))*vg.Centimeter*2.2, 14*vg.Centimeter)
}

// WriteSeriesChart draws one benchmark's nightly series with its change
// points as vertical lines.
func WriteSeriesChart(path, title, unit string, values []float64, changePoints []int) error {
	p, err := seriesPlot(title, unit, nil, values, nil, changePoints, nil)
	if err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return save(p, path, 18*vg.Centimeter, 9*vg.Centimeter)
}

// SeriesSVG renders a series as SVG: its values at their times, its
// change points as dashed red lines before the point that starts a
// segment, and its environment changes (a new env-id) as dotted grey
// ones. The value axis reads in unit's scaled form, as the tables do
// (158.5n sec/op). A band, when given, shades each run's range of forks
// around its point. Each point with a tip (its commit, date and value)
// shows it as a tooltip: an SVG <title> of a dot over the point, read
// when the chart is opened or embedded as a document rather than an
// image. Any title draws: characters XML cannot carry are replaced.
func SeriesSVG(title, unit string, at []time.Time, values []float64, band *Band, changePoints, envChanges []int, tips []string) ([]byte, error) {
	if len(at) != len(values) {
		return nil, fmt.Errorf("%d times for %d values", len(at), len(values))
	}
	p, err := seriesPlot(title, unit, at, values, band, changePoints, envChanges)
	if err != nil {
		return nil, err
	}
	c := vgsvg.New(24*vg.Centimeter, 10*vg.Centimeter)
	dc := draw.New(c)
	p.Draw(dc)
	var buf bytes.Buffer
	if _, err = c.WriteTo(&buf); err != nil {
		return nil, err
	}
	svg := buf.Bytes()
	if len(tips) > 0 {
		// The dots go inside the canvas's last group, whose coordinates
		// are the plot's (points, from the bottom left).
		da := p.DataCanvas(dc)
		trX, trY := p.Transforms(&da)
		var dots bytes.Buffer
		dots.WriteString(`<g class="tips">` + "\n")
		for i, tip := range tips {
			if i >= len(values) || tip == "" {
				continue
			}
			fmt.Fprintf(&dots, `<circle cx="%.2f" cy="%.2f" r="4" fill="transparent"><title>%s</title></circle>`+"\n",
				trX(unixSeconds(at[i])).Points(), trY(values[i]).Points(), html.EscapeString(printable(tip)))
		}
		dots.WriteString("</g>\n")
		end := bytes.LastIndex(svg, []byte("</g>\n</svg>"))
		if end < 0 {
			return nil, fmt.Errorf("the chart's SVG does not end as drawn")
		}
		svg = slices.Concat(svg[:end], dots.Bytes(), svg[end:])
	}
	// The page's own font where the reader has no Liberation Sans.
	return bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"), []byte("font-family:'Liberation Sans',system-ui,sans-serif;")), nil
}

// sans sets every text of p in Liberation Sans, as the pages around the
// charts are in a sans-serif font (plot's default is a serif).
func sans(p *plot.Plot) {
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		f.Variant = "Sans"
	}
}

// seriesPlot draws values at times at, or in run order when at is nil.
func seriesPlot(title, unit string, at []time.Time, values []float64, band *Band, changePoints, envChanges []int) (*plot.Plot, error) {
	if len(values) == 0 {
		return nil, fmt.Errorf("nothing to draw")
	}
	p := plot.New()
	sans(p)
	p.Title.Text = printable(title)
	p.Y.Label.Text = printable(unit)
	p.Y.Tick.Marker = unitTicks{benchunit.ClassOf(unit)}
	x := func(i int) float64 { return float64(i) }
	p.X.Label.Text = "run"
	if at != nil {
		x = func(i int) float64 { return unixSeconds(at[i]) }
		p.X.Label.Text = "time (UTC)"
		p.X.Tick.Marker = timeTicks{}
	}
	xys := make(plotter.XYs, len(values))
	lo, hi := values[0], values[0]
	for i, v := range values {
		xys[i] = plotter.XY{X: x(i), Y: v}
		lo, hi = min(lo, v), max(hi, v)
	}
	if band != nil {
		var err error
		if lo, hi, err = band.add(p, x, len(values), lo, hi); err != nil {
			return nil, err
		}
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, err
	}
	p.Add(line, points, plotter.NewGrid())
	mark := func(marks []int, c color.Color, dashes []vg.Length) error {
		for _, cp := range marks {
			if cp <= 0 || cp >= len(values) {
				continue
			}
			mx := (x(cp-1) + x(cp)) / 2 // between the segments
			l, err := plotter.NewLine(plotter.XYs{{X: mx, Y: lo}, {X: mx, Y: hi}})
			if err != nil {
				return err
			}
			l.Color, l.Dashes = c, dashes
			p.Add(l)
		}
		return nil
	}
	if err := mark(envChanges, color.Gray{Y: 130}, []vg.Length{vg.Points(1), vg.Points(2)}); err != nil {
		return nil, err
	}
	if err := mark(changePoints, color.RGBA{R: 200, G: 40, B: 40, A: 255}, []vg.Length{vg.Points(4), vg.Points(3)}); err != nil {
		return nil, err
	}
	return p, nil
}

// Band is each run's range of forks: Lo[i] to Hi[i] around value i,
// unknown where Hi[i] is 0 or below Lo[i].
type Band struct{ Lo, Hi []float64 }

// add shades the band on p under the series, and returns the range of
// values lo to hi widened to hold it.
func (b *Band) add(p *plot.Plot, x func(int) float64, n int, lo, hi float64) (float64, float64, error) {
	shades, err := b.polygons(x, n)
	if err != nil {
		return lo, hi, err
	}
	for _, sh := range shades {
		p.Add(sh)
		for _, v := range sh.XYs[0] {
			lo, hi = min(lo, v.Y), max(hi, v.Y)
		}
	}
	return lo, hi, nil
}

// polygons shades the band as one polygon for each stretch of runs
// whose range is known, x placing run i.
func (b *Band) polygons(x func(int) float64, n int) ([]*plotter.Polygon, error) {
	known := func(i int) bool { return i < len(b.Lo) && i < len(b.Hi) && b.Hi[i] > 0 && b.Hi[i] >= b.Lo[i] }
	var out []*plotter.Polygon
	for i := 0; i < n; {
		if !known(i) {
			i++
			continue
		}
		j := i
		for j < n && known(j) {
			j++
		}
		var ring plotter.XYs
		for k := i; k < j; k++ {
			ring = append(ring, plotter.XY{X: x(k), Y: b.Hi[k]})
		}
		for k := j - 1; k >= i; k-- {
			ring = append(ring, plotter.XY{X: x(k), Y: b.Lo[k]})
		}
		pg, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, err
		}
		pg.Color = color.NRGBA{R: 60, G: 110, B: 200, A: 50}
		pg.LineStyle.Width = 0
		out = append(out, pg)
		i = j
	}
	return out, nil
}

// unitTicks labels an axis as benchunit scales its unit's values.
type unitTicks struct{ class benchunit.Class }

func (u unitTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = benchunit.Scale(ts[i].Value, u.class)
		}
	}
	return ts
}

// printable is s with what XML 1.0 cannot carry (control characters,
// invalid UTF-8) replaced by U+FFFD, at most 160 runes long.
func printable(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == 160 {
			b.WriteString("…")
			break
		}
		if r == utf8.RuneError || unicode.IsControl(r) || r == 0xFFFE || r == 0xFFFF {
			r = utf8.RuneError
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func save(p *plot.Plot, path string, w, h vg.Length) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// Rendered in memory and replaced atomically under a unique temporary
	// name: two runs drawing the same chart (concurrent nightlies) do not
	// collide.
	wt, err := p.WriterTo(w, h, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return atomicfile.Replace(path, buf.Bytes())
}
