// Package servecmd is the results server's commands, serve and token, as
// cobra commands that a program adds to benchctl's CLI through
// benchctl.Config's Commands. It is the only package between the CLI and
// the store, so the SQL drivers are linked into the programs that serve
// (this repository's cmd/benchctl) and into no benchmark program.
//
// A command's error carries its exit code (ExitCode: 1 failed, 2 bad
// usage), which benchctl's Main returns.
package servecmd
