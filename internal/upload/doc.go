// Package upload sends result files to a benchctl results server (the
// perfdata protocol: a multipart POST of "file" parts and a "commit"
// field, as golang.org/x/perf/storage's client sends; the server is tested
// with that client, and this package does without it so that the tool
// another module adds does not require x/net) without
// ever losing one: each upload is written to a spool directory before it
// is sent and removed from it only once the server has answered with the
// upload's ID. An upload the server could not take (unreachable, slow,
// an error status) stays spooled and is sent again by [Spool.Flush], which
// every command given a server calls first. The server deduplicates by
// content hash, so sending a spooled upload that did arrive stores
// nothing twice.
//
// An upload the server refuses for its content (400, 413) is moved to
// the spool's rejected/ directory with the server's message: sending it
// again cannot succeed, and it is kept for the user, not dropped. An
// entry whose record cannot be read, or whose files are missing or do not
// hash to its ID, is moved to damaged/ with the reason: every entry is
// delivered, rejected or set aside, none is retried for ever.
//
// A Result says whether the upload is in the spool (Spooled): only once
// its directory is renamed into place and the spool directory synced.
// The error of a failed upload is the transport's own ("connection
// refused") or the server's status and message.
package upload
