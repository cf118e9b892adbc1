package benchctl

import (
	"fmt"
	"strconv"
	"strings"
)

// percentArg parses the percentage s ("2%" or "2") of flag as a fraction
// (0.02). It must lie above 0 and below hi percent, or at most hi when
// closed.
func percentArg(flag, s string, hi float64, closed bool) (float64, error) {
	p, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	ok := err == nil && p > 0 && (p < hi || closed && p == hi)
	if !ok {
		bound := "below"
		if closed {
			bound = "at most"
		}
		return 0, fmt.Errorf("%s %q: want a percentage above 0 and %s %g, such as 2%%", flag, s, bound, hi)
	}
	return p / 100, nil
}
