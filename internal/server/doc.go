// Package server serves a results store over HTTP: the perfdata protocol
// of golang.org/x/perf/storage (POST /upload, GET /search, GET /uploads),
// a JSON API for machines, series and change points, and the dashboard
// pages, which are plain HTML with server-rendered SVG charts and no
// script.
//
// Contract:
//   - Reads are anonymous. An upload needs a known token (Authorization:
//     Bearer TOKEN, the scheme in any case); a server without a tokens
//     file accepts none, and one whose tokens file became unreadable or
//     malformed accepts none (503) until it is repaired. A token revoked
//     from the file is refused at once.
//   - Every request is bounded in time: its body must arrive within
//     ReadTimeout (an authenticated upload's within UploadTimeout) and
//     its answer be written within WriteTimeout; its queries are
//     cancelled after QueryTimeout (an upload's writes after
//     QueryTimeout from the end of its body), a 503. ConnLimit bounds the
//     connections: at the limit a new one takes the place of the one
//     quiet the longest, so clients that open connections and send
//     nothing cannot take everyone's descriptors.
//   - /healthz answers ok only while the store answers a query and, for
//     SQLite, its file is the one opened: a store whose file was removed
//     or replaced refuses every write (503), so no client drops an
//     upload the server could not keep.
//   - Content is checked before anything is stored, the same on every
//     back end: a NUL byte, invalid UTF-8, names over the store's limits
//     or holding bidirectional controls,
//     a time or throughput that is not a positive number are 400. The
//     answer to an upload lists what the series left out ("warnings").
//   - Every answer carries a Content-Security-Policy (no script, images
//     from here only), X-Frame-Options DENY and nosniff. A 503's message
//     never repeats the database's error (its user, host and port): the
//     server's log has it.
//   - An upload is read whole (up to MaxUpload bytes) before it is
//     stored, then stored in one transaction or not at all: a body cut
//     off by a client or server dying stores nothing, and the same files
//     uploaded again store nothing more.
//   - Every failure is an HTTP status with a message in plain text: 400
//     for a malformed upload or query, 401 for a missing or unknown
//     token, 404 for what the store does not hold, 413 for an upload over
//     the limit, 503 when the database fails. The server keeps serving.
//   - After an upload the uploading machine's new series are analyzed in
//     the background (one analysis at a time); pages say which series
//     are still pending.
package server
