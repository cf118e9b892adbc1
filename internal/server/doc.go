// Package server serves a results store over HTTP: the perfdata protocol
// of golang.org/x/perf/storage (POST /upload, GET /search, GET /uploads),
// a JSON API for machines, series and change points, and the dashboard
// pages, which are plain HTML with server-rendered SVG charts and no
// script.
//
// Contract:
//   - Reads are anonymous. An upload needs a known token (Authorization:
//     Bearer TOKEN); a server without a tokens file accepts none.
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
