// Package recordingtest is test support for recordings, in the manner of
// sandbox/sandboxtest: [Load] loads a recording directory for a test and
// fails the test, naming the file, line and field, when it does not load.
//
//	rec := recordingtest.Load(t, filepath.Join(root, "transcripts", "code-mode-turn"))
//
// # Imports
//
// recordingtest imports package recording only. Only _test.go files import
// it.
package recordingtest
