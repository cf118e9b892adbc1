//go:build race

package engine_test

// raceBuild is set in builds with the race detector, whose forks start
// and run several times slower.
const raceBuild = true
