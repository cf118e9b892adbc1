// Package fleetcmd is the fleet's commands, agent (with [Uploader], which
// sends a night's file to the results server) and fleet migrate and
// nightlies, as
// cobra commands a program adds to benchctl's CLI through
// benchctl.Config's Commands, and [Remote], the client of a fleet that
// ab --fleet connects with: importing the package sets ab.Fleets. It is the only package
// between the CLI and River's PostgreSQL driver, so the driver is linked
// into the programs that run a fleet (this repository's cmd/benchctl)
// and into no benchmark program.
//
// A command's error is a session.UsageError (exit 2) or
// session.FailedError (exit 1), whose ExitCode benchctl's Main returns.
package fleetcmd
