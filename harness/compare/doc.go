// Package compare turns Go benchmark-format files into comparison tables:
// the statistics of golang.org/x/perf/benchmath (median with an
// order-statistic confidence interval and the Mann-Whitney U test by
// default, or what a Unit line's assume= says), units scaled with
// benchunit, and rows, columns and tables projected with benchproc, as
// benchstat does (-table .config, -row .fullname, -col .file). [Build]
// gathers the cells; [Tables.Text] prints benchstat's numbers,
// [Tables.CSV] the same as CSV, and [Tables.Markdown] a pull-request table (the shape of
// apache/pulsar#26821's): Benchmark, baseline, change, Change, with each side's
// range and "~" where the difference is not significant at α or smaller
// than the minimum change, and a geomean row.
//
// The first column is the baseline every other column is compared with.
// Files are read with benchfmt; a syntax error is reported with its file
// and line and the line is skipped, as benchstat does.
package compare
