// Package sessiontest is test support for the session log, in the manner of
// sandbox/sandboxtest: the session log a test needs, made in the test's own
// temporary directory and closed when the test ends.
//
//	log := sessiontest.New(t, "s1", ws) // header {ID: "s1", Cwd: ws}
//	sessiontest.StartTurn(t, log)       // turn/start {"turn":1}: a turn is open
//
// [New] creates the log (options such as session.WithClock pass through) and
// fails the test when it cannot; [StartTurn] appends the turn/start event
// that approval and escalation need before they ask. A test that checks
// session.Create itself, or needs the log at a particular path, calls
// session.Create directly.
//
// # Imports
//
// sessiontest imports package session only. Only _test.go files and the test
// tooling under harness/ import it; no product package does.
package sessiontest
