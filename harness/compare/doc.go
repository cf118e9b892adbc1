// Package compare turns Go benchmark-format files into comparison tables:
// rows, columns and tables projected with benchproc as benchstat does
// (-table .config, -row .fullname, -col .file), units scaled with
// benchunit. [Build] gathers the cells, each fork of a benchctl file one
// sample (the median of its iterations) unless Options.Samples says
// otherwise, and decides every comparison with the baseline column.
//
// A comparison has one answer, its [Decision], made by the verdict
// statistics: the change as a ratio with its interval, by pairs of rounds
// where both sides' forks ran in the same rounds of one run, its p-value
// adjusted across the rows of a unit at a false-discovery rate of α, the
// three-way verdict (changed, same within Options.MinChange, unknown) and
// the smallest change the samples could have detected. [Tables.Markdown]
// prints them in a pull-request table (the shape of apache/pulsar#26821's:
// Benchmark, each side's median and range, Change, Verdict, Detectable)
// with a geomean row, a headline tallying the verdicts and one legend
// above the tables; [Tables.CSV] prints the same, a line per cell, and
// [Tables.Verdicts] as one value of the stable JSON schema [JSONSchema].
//
// [GoTest] writes files' results as go test -bench writes them (its keys
// only), so benchstat puts them in one table with a plain go test file.
//
// [Tables.Text] is benchstat's output, kept for parity with benchstat:
// each cell's summary as benchstat computes it (median with an
// order-statistic interval by default, or what a Unit line's assume=
// says) and its Mann-Whitney U test against the baseline. It is an output
// format, not a second answer: no command decides by it.
//
// The first column is the baseline every other column is compared with.
// Files are read with benchfmt; a syntax error is reported with its file
// and line and the line is skipped, as benchstat does.
package compare
