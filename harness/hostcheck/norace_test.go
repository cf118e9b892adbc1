//go:build !race

package hostcheck

const raceEnabled = false
