// Package store keeps uploaded benchmark results for a fleet of machines
// in a SQL database: SQLite (one file, no server: the embedded default) or
// PostgreSQL (one server every machine uploads to), with the same schema
// and the same code.
//
// The raw benchfmt files are the truth: each upload's files are kept
// byte for byte (compressed, with their content hash), and everything
// else is an index rebuilt from them by [Store.Reindex] or by a
// migration — the configuration labels of each file (machine-id, env-id,
// commit, pkg, … and the server's upload labels) that the perfdata query
// language of golang.org/x/perf/storage filters on, the benchmarks and
// their name keys (/impl, /size, …), and one series per machine,
// benchmark and unit of time or throughput, whose points are the median
// of a file's forks (as benchctl nightly reads them).
//
// Contract:
//   - An upload is all or nothing: it is validated whole (benchfmt syntax,
//     a machine-id on every result, at least one result per file, text
//     without NUL bytes in valid UTF-8, names within [MaxFileName] and
//     [MaxName] and without bidirectional controls, at most [MaxBenchmarks] benchmarks, every time and
//     throughput a positive number) before anything is written, and
//     written in one transaction. A SQLite store whose file was removed or
//     replaced after [Open] refuses every write from then on, and [Store.Check]
//     fails: a write there would be acknowledged and lost. Its ID is a
//     prefix of the hash of its files' names and contents, so uploading
//     the same files again returns the first upload and stores nothing.
//     A file whose bytes are stored already (the same run under another
//     name) gets a row of its own that points at the stored bytes: they
//     are kept once and counted once, and the upload's answer says so.
//   - A query that cannot be turned into SQL (a word without an
//     operator, an upper-case key) is an [ErrQuery]; nothing is spliced
//     into SQL text, every value is a parameter.
//   - The schema carries its version. [Open] migrates an older one (each
//     migration in its own transaction) and refuses a newer one.
//   - Change points are computed per series by the E-divisive code of
//     benchctl nightly, over the series' last [AnalysisWindow] points, by
//     [Store.Analyze], which only looks at series with new points.
package store
