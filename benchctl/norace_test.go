//go:build !race

package benchctl

const raceEnabled = false
