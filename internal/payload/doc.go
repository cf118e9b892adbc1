// Package payload is what an uploading client, the results server and its
// store agree on without sharing code that needs a database: the files of
// one upload, the content hash that names it, and the environment
// variable a client reads its upload token from. It imports nothing
// beyond the standard library, so a benchmark program that uploads its
// results links no SQL driver.
package payload
