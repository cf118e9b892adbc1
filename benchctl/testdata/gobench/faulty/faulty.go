// Package faulty is a fixture of benchmarks that fail in every way.
package faulty
