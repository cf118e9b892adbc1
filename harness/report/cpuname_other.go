//go:build !amd64

package report

// brandString is "" where the brand string is not read: the name comes
// from the operating system.
func brandString() string { return "" }
