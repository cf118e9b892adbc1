// Package charts is the drawing a benchmark program opts into: with
// benchctl.Config{Charts: charts.Draw}, compare --chart draws each
// benchmark's change with its interval, and nightly draws each series
// with its change points (SVG or PNG, with gonum/plot). A program that
// does not import this package links no plotting package.
package charts

import (
	"github.com/ledgerbench/ledgerbench/benchctl"
	"github.com/ledgerbench/ledgerbench/internal/chart"
)

// Draw draws what the commands chart.
var Draw = &benchctl.Charts{Series: chart.WriteSeriesChart, Change: chart.WriteChangeChart}
