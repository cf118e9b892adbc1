// Package fleet adds a fleet to a benchmark program: the commands agent
// and fleet migrate, and --fleet on ab and bisect (their rounds measured
// by the agents of a class, on River's queue in PostgreSQL). A program
// gets them by passing Commands in its benchctl.Config:
//
//	func main() { os.Exit(benchctl.Config{Commands: fleet.Commands}.Main()) }
//
// It links the PostgreSQL driver and River; a program that leaves it out
// links neither and refuses --fleet.
package fleet
