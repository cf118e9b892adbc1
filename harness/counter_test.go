package harness

import "testing"

// TestCounterAddsWholeAndFractionalAmounts: a counter's total is its
// integer adds and its fractional adds together.
func TestCounterAddsWholeAndFractionalAmounts(t *testing.T) {
	c := &Counter{unit: "x/op"}
	c.Add(3)
	c.AddFloat(0.5)
	c.Add(-1)
	c.AddFloat(0.25)
	if got := c.value(); got != 2.75 {
		t.Errorf("total %g, want 2.75", got)
	}
}
