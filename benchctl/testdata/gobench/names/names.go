// Package names holds benchmarks whose sub-benchmark names are not safe
// as file names.
package names
