// Package broken is a fixture whose test file does not compile.
package broken
