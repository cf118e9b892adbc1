package chart

import (
	"fmt"
	"html"
	"strings"
)

// Sparkline sizes, in CSS pixels.
const (
	sparkW, sparkH = 140, 30
	sparkPad       = 3
)

// Sparkline draws values (oldest first) as a small inline SVG for a
// table row: a line through the values, the runs from index shift on
// (the segment after a change; none when shift is not in 1..len-1) in
// red after a dashed mark, and each run a dot whose tooltip is its tip
// (an SVG <title>: its commit, date and value). label is the chart's
// accessible name. Tips and label are escaped here.
func Sparkline(values []float64, shift int, tips []string, label string) string {
	if len(values) == 0 {
		return ""
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	x := func(i int) float64 {
		if len(values) == 1 {
			return sparkW / 2
		}
		return sparkPad + float64(i)*(sparkW-2*sparkPad)/float64(len(values)-1)
	}
	y := func(v float64) float64 {
		if hi == lo {
			return sparkH / 2
		}
		return sparkPad + (hi-v)/(hi-lo)*(sparkH-2*sparkPad)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="spark" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		sparkW, sparkH, sparkW, sparkH, html.EscapeString(label))
	line := func(from, to int, color string) {
		if to-from < 1 {
			return
		}
		b.WriteString(`<polyline fill="none" stroke="` + color + `" stroke-width="1.5" points="`)
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(i), y(values[i]))
		}
		b.WriteString(`"/>`)
	}
	if shift > 0 && shift < len(values) {
		line(0, shift-1, "#666")
		line(shift-1, shift, "#bbb")
		line(shift, len(values)-1, "#c82828")
		mx := (x(shift-1) + x(shift)) / 2
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="0" y2="%d" stroke="#c82828" stroke-dasharray="3,2"/>`, mx, mx, sparkH)
	} else {
		line(0, len(values)-1, "#666")
	}
	for i, v := range values {
		tip := ""
		if i < len(tips) {
			tip = tips[i]
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="transparent"><title>%s</title></circle>`, x(i), y(v), html.EscapeString(tip))
	}
	b.WriteString(`</svg>`)
	return b.String()
}
