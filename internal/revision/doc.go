// Package revision builds the benchmarks of a git repository at given
// revisions, with the local toolchain, for the commands that compare
// revisions (ab, nightly against its anchor, and what comes after them):
//
//   - [Repo] resolves revisions (refs, HEAD, the working tree, the latest
//     tag) into [Revision]s;
//   - [Workspace] checks revisions out into detached worktrees under a
//     temporary directory and removes them when closed; worktrees left by
//     a killed command are removed by [Repo.RemoveStaleWorktrees];
//   - a benchmark program (the main package that calls benchctl.Main) is
//     found with [FindProgram] and built per revision with
//     [Workspace.BuildBase]; a revision that predates the program or a
//     benchmark is built with the newer revision's benchmark declarations
//     overlaid (go build -overlay);
//   - [Repo.FirstParents] lists a bisection's range (good excluded, bad
//     included, along bad's first parents), refusing a good revision that
//     is not an ancestor of bad;
//   - a [BuildCache] keeps programs built at commits by tree hash and
//     toolchain, for the builds that the tree alone decides;
//   - go test benchmarks are built per package with [BuildPackages] and
//     per revision pair with [Workspace.BuildTestPair], overlaying the
//     newer revision's _test.go files where the older lacks a benchmark.
//
// Every build sets GOTOOLCHAIN=local and -buildvcs=false, so both sides
// of a comparison are compiled by the same toolchain; a program is built
// with -trimpath, so its bytes name its source, not the worktree that
// built it (a fleet publishes programs by their hash). Errors that come
// from the caller's input (a revision that does not exist, a pattern that
// matches nothing) are [*UsageError]s; the rest are failures of the
// repository or the build. Progress is told through a Say function, never
// printed.
package revision
