//go:build race

package benchctl

const raceEnabled = true
