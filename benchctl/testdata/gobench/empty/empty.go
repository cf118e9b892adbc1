// Package empty is a fixture without test files.
package empty
