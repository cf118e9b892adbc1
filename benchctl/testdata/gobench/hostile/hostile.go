// Package hostile holds benchmarks that report results go test did not
// measure, or print what reads as a failure.
package hostile
