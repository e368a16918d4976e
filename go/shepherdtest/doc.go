// Package shepherdtest starts a Shepherd server (a ZooKeeper-compatible coordination server)
// for a Go test, on free loopback ports, and stops it when the test ends:
//
//	srv := shepherdtest.Start(t)
//	conn, _, err := zk.Connect(srv.Servers(), 10*time.Second)
//	...
//	srv.ExpireSession(conn.SessionID()) // the server ends the session, as its timeout would
//
// It runs the `shepherd` binary (the Binary option, else $SHEPHERD_BIN, else `shepherd` on
// $PATH) as `shepherd serve --ready-json --exit-with-stdin --test-controls`, reads the one JSON
// line the server prints once every listener is bound, and talks to the server's test controls
// (docs/test-controls.md in the Shepherd repository) with the token from that line.
//
// Invariant: a server started here never outlives its test. t.Cleanup stops it, and its stdin
// is a pipe held by this process, so the server also stops by itself when the test binary
// dies in any way. No fixed port is used, and no listener is opened that was not asked for.
//
// The package uses the standard library only.
package shepherdtest
