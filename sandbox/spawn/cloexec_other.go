//go:build !linux

package spawn

// closeOnExecAbove2 marks every descriptor from 3 up close-on-exec.
func closeOnExecAbove2() error { return closeOnExecListed("/dev/fd") }
