package explain

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
)

// node is a frame of the flame graph: the CPU per op of the stacks
// through it on each side (the mean over the side's forks).
type node struct {
	name      string
	base, exp float64
	children  map[string]*node
}

func (n *node) child(name string) *node {
	c := n.children[name]
	if c == nil {
		c = &node{name: name, children: map[string]*node{}}
		n.children[name] = c
	}
	return c
}

// addSide adds a side's forks to the tree, each sample's value per op
// divided by the number of forks (the side's mean).
func (n *node) addSide(forks []Fork, exp bool) error {
	for _, f := range forks {
		i, err := cpuIndex(f.Profile)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		for _, s := range f.Profile.Sample {
			v := float64(s.Value[i]) / float64(f.Ops) / float64(len(forks))
			at := n
			at.add(v, exp)
			names := stack(s)
			for j := len(names) - 1; j >= 0; j-- {
				at = at.child(names[j])
				at.add(v, exp)
			}
		}
	}
	return nil
}

func (n *node) add(v float64, exp bool) {
	if exp {
		n.exp += v
	} else {
		n.base += v
	}
}

// Flame graph geometry, in pixels.
const (
	flameWidth  = 1200.0
	frameHeight = 17.0
	flameTop    = 36.0
	charWidth   = 6.5
)

// FlameSVG writes the differential flame graph of two sides' forks as
// one self-contained SVG document (no script, no external reference):
// each frame is a function on a stack, the root at the bottom; its width
// is its cumulative cost in the baseline; its colour the change of that
// cost, red where it grew and blue where it shrank, the deeper the
// larger the change against the largest of any frame; grey where r
// does not find its function's cumulative change significant (CumQ). A
// frame absent from the baseline has no width: the text report lists
// it. Every frame's title gives both sides' costs and the change.
func FlameSVG(w io.Writer, title string, base, exp []Fork, r *Report) error {
	root := &node{name: "all", children: map[string]*node{}}
	if err := root.addSide(base, false); err != nil {
		return err
	}
	if err := root.addSide(exp, true); err != nil {
		return err
	}
	if root.base <= 0 {
		return fmt.Errorf("the baseline's profiles hold no sample: no frame has a width")
	}
	changed := map[string]bool{}
	for _, f := range r.Functions {
		changed[f.Name] = f.CumQ <= r.Alpha
	}
	maxDelta := root.maxDelta()
	depth := root.depth()
	height := flameTop + float64(depth)*frameHeight + 8
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="monospace" font-size="11">`+"\n", flameWidth+20, height, flameWidth+20, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="16" font-size="13">%s</text>`+"\n", esc(title))
	fmt.Fprintf(&b, `<text x="10" y="30">width: the baseline's CPU per op (%s in all); red grew, blue shrank (the deepest: %s); experiment in all %s</text>`+"\n",
		esc(nsOp(root.base)), esc(signed(maxDelta)), esc(nsOp(root.exp)))
	root.draw(&b, 10, flameWidth/root.base, 0, depth, maxDelta, changed)
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// maxDelta is the largest change of any frame below n (at least 1 ns, so
// colours stay defined).
func (n *node) maxDelta() float64 {
	m := 1.0
	for _, c := range n.children {
		m = math.Max(m, math.Max(math.Abs(c.exp-c.base), c.maxDelta()))
	}
	return m
}

func (n *node) depth() int {
	d := 0
	for _, c := range n.children {
		d = max(d, c.depth())
	}
	return d + 1
}

// draw draws n at x (its left edge) and level (0 the root, at the
// bottom), then its children left to right in name order.
func (n *node) draw(b *bytes.Buffer, x, scale float64, level, depth int, maxDelta float64, changed map[string]bool) {
	width := n.base * scale
	if width < 0.3 {
		return
	}
	y := flameTop + float64(depth-1-level)*frameHeight
	d := n.exp - n.base
	class, fill := "same", "#eeeeee"
	if changed[n.name] {
		class, fill = frameColour(d, maxDelta)
	}
	change := "no baseline cost"
	if n.base > 0 {
		change = fmt.Sprintf("%+.1f %%", 100*d/n.base)
	}
	fmt.Fprintf(b, `<g class="%s"><title>%s: baseline %s, experiment %s, change %s (%s)</title>`, class, esc(n.name), esc(nsOp(n.base)), esc(nsOp(n.exp)), esc(signed(d)), esc(change))
	fmt.Fprintf(b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s" stroke="#ffffff" stroke-width="0.5"/>`, x, y, width, frameHeight-1, fill)
	if fit := int((width - 6) / charWidth); fit >= 3 {
		label := ShortName(n.name)
		if len(label) > fit {
			label = label[:fit-2] + ".."
		}
		fmt.Fprintf(b, `<text x="%.2f" y="%.1f">%s</text>`, x+3, y+frameHeight-5, esc(label))
	}
	b.WriteString("</g>\n")
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		c := n.children[name]
		c.draw(b, x, scale, level+1, depth, maxDelta, changed)
		x += c.base * scale
	}
}

// frameColour is a frame's class ("grew", "shrank" or "same") and fill: a
// change under 1 % of the largest is "same", pale grey.
func frameColour(d, maxDelta float64) (string, string) {
	i := math.Min(math.Abs(d)/maxDelta, 1)
	if i < 0.01 {
		return "same", "#eeeeee"
	}
	pale := int(math.Round(235 * (1 - i)))
	if d > 0 {
		return "grew", fmt.Sprintf("rgb(255,%d,%d)", pale, pale)
	}
	return "shrank", fmt.Sprintf("rgb(%d,%d,255)", pale, pale)
}

// esc escapes text for XML.
func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
