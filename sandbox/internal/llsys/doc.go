// Package llsys is the thin kernel layer under the Landlock runner and the
// in-process launcher: raw Landlock system calls (through go-landlock's
// landlock/syscall package), prctl, capability sets, O_PATH opens that
// follow no symlink (openat2 with RESOLVE_NO_SYMLINKS), ptrace, resource
// limits and the write-access check of a cgroup file ([Writable]). It
// holds no policy: which rights to grant, and in which order to drop
// capabilities, is decided by package landlock.
//
// # Threads
//
// [SetNoNewPrivs], [RestrictSelf] and the capability calls
// ([ClearAmbientCaps], [DropBoundingCap], [ClearCaps]) act on the calling OS
// thread only (no TSYNC; capabilities are per thread). Callers must hold
// runtime.LockOSThread for the whole sequence and must let that thread die
// afterwards (return from the goroutine without
// runtime.UnlockOSThread), or replace the process with execve.
//
// # Other platforms
//
// Off Linux every call fails with ENOSYS, so a caller fails closed.
//
// # Imports
//
// A leaf: llsys imports go-landlock's syscall package and x/sys only,
// nothing of this module.
package llsys
