package chart

import (
	"time"

	"gonum.org/v1/plot"
)

// timeTicks marks a time axis (seconds since the Unix epoch, UTC) at
// calendar boundaries, seconds to years, in a step that gives about four
// to eight labels, each as precise as the step needs: runs seconds apart
// read apart, and the first label carries the year.
type timeTicks struct{}

// tickSteps are the steps of a time axis, finest first, with the layout
// of their labels and of the first label.
var tickSteps = []struct {
	d            time.Duration
	months       int
	layout, head string
}{
	{time.Second, 0, "15:04:05", "2006-01-02 15:04:05"},
	{2 * time.Second, 0, "15:04:05", "2006-01-02 15:04:05"},
	{5 * time.Second, 0, "15:04:05", "2006-01-02 15:04:05"},
	{10 * time.Second, 0, "15:04:05", "2006-01-02 15:04:05"},
	{30 * time.Second, 0, "15:04:05", "2006-01-02 15:04:05"},
	{time.Minute, 0, "15:04", "2006-01-02 15:04"},
	{5 * time.Minute, 0, "15:04", "2006-01-02 15:04"},
	{15 * time.Minute, 0, "15:04", "2006-01-02 15:04"},
	{time.Hour, 0, "15:04", "2006-01-02 15:04"},
	{3 * time.Hour, 0, "01-02 15:04", "2006-01-02 15:04"},
	{6 * time.Hour, 0, "01-02 15:04", "2006-01-02 15:04"},
	{12 * time.Hour, 0, "01-02 15:04", "2006-01-02 15:04"},
	{24 * time.Hour, 0, "01-02", "2006-01-02"},
	{2 * 24 * time.Hour, 0, "01-02", "2006-01-02"},
	{7 * 24 * time.Hour, 0, "01-02", "2006-01-02"},
	{0, 1, "2006-01", "2006-01"},
	{0, 3, "2006-01", "2006-01"},
	{0, 6, "2006-01", "2006-01"},
	{0, 12, "2006", "2006"},
	{0, 24, "2006", "2006"},
	{0, 60, "2006", "2006"},
	{0, 120, "2006", "2006"},
	{0, 600, "2006", "2006"},
	{0, 1200, "2006", "2006"},
}

// maxTimeTicks is the most labels an axis gets.
const maxTimeTicks = 8

func (timeTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := unixTime(min), unixTime(max)
	for i, st := range tickSteps {
		var at []time.Time
		for t := firstBoundary(lo, st.d, st.months); !t.After(hi); t = next(t, st.d, st.months) {
			at = append(at, t)
			if len(at) > maxTimeTicks {
				break
			}
		}
		if len(at) > maxTimeTicks {
			if i < len(tickSteps)-1 {
				continue
			}
			at = at[:maxTimeTicks] // past a thousand years: the start
		}
		ticks := make([]plot.Tick, len(at))
		for j, t := range at {
			layout := st.layout
			if j == 0 {
				layout = st.head
			}
			ticks[j] = plot.Tick{Value: unixSeconds(t), Label: t.Format(layout)}
		}
		if len(ticks) == 0 { // a span shorter than a second: its start
			ticks = append(ticks, plot.Tick{Value: min, Label: lo.Format("2006-01-02 15:04:05.000")})
		}
		return ticks
	}
	return nil
}

// unixSeconds is t on the time axis: seconds since the Unix epoch.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func unixTime(s float64) time.Time { return time.Unix(0, int64(s*1e9)).UTC() }

// firstBoundary is the first boundary of the step at or after t.
func firstBoundary(t time.Time, d time.Duration, months int) time.Time {
	if months == 0 {
		b := t.Truncate(d)
		if b.Before(t) {
			b = b.Add(d)
		}
		return b
	}
	m := (t.Year()*12 + int(t.Month()) - 1) / months * months // months since year 0, on the step
	b := time.Date(m/12, time.Month(m%12+1), 1, 0, 0, 0, 0, time.UTC)
	if b.Before(t) {
		b = b.AddDate(0, months, 0)
	}
	return b
}

func next(t time.Time, d time.Duration, months int) time.Time {
	if months == 0 {
		return t.Add(d)
	}
	return t.AddDate(0, months, 0)
}
