//go:build race

package eviction

const raceEnabled = true
