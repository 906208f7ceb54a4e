// Package asuser runs tests of the running test binary again as another
// user, so that a root run checks in the same go test that an unprivileged
// user (uid 65534, "nobody") gets the same results on a machine where root
// ran first.
//
// [RunTests] copies the test binary (and any executables the tests need)
// into a fresh directory everybody may read, runs the named tests there with
// the given uid and gid (and supplementary groups, when given), a plain PATH
// and that directory as HOME, and fails
// the calling test unless each named test passed and none skipped. It skips
// when the caller is not root ("needs root (CAP_SETUID)").
//
// Test support only: imported from _test.go files; it imports nothing of
// this repository.
package asuser
