//go:build race

package hostcheck

const raceEnabled = true
