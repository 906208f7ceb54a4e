// Package probe holds the single file operations the escape corpus and the
// kernel matrix try from inside a sandbox, one operation per invocation.
//
// # Why a program
//
// Shell tools hide the syscall: mv falls back to copy and unlink when rename(2)
// fails with EXDEV, touch creates files, and busybox in a kernel-test initramfs
// lacks some applets. The probe performs exactly one syscall-level operation
// (rename, link, truncate, utimensat, setxattr, ioctl, O_TMPFILE + linkat, a
// write to a descriptor, a re-exec chain) and reports the errno, so a table can
// say "denied with EXDEV" rather than "mv failed".
//
// # Output
//
// One line on stdout: "<op>: ok" or "<op>: <ERRNO> (<text>)"; exit 0, 1 or 2
// (usage). The program is harness/escape/cmd/escape-probe; it builds statically
// (CGO_ENABLED=0) so it also runs in the kernel-matrix initramfs.
//
// # Imports
//
// A leaf: it imports nothing of this module, so the probe binary is small
// and runs in an initramfs.
package probe
