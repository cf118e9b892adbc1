// Package history keeps recorded runs per machine and watches their
// series: [ChangePoints] finds where a benchmark's distribution changed
// (E-divisive means with a permutation test), and the nightly store
// (results/nightly/<machine-id>/YYYY/MM/…) is read back into one series per
// benchmark and unit, never mixing machines.
package history
