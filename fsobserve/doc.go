// Package fsobserve holds read-before-write file observation and the local
// file provider the model-facing file tools (package tools/fs) stand on.
//
// # Observation policy
//
// [Observations] records, per session id and per target key, what the session
// last saw: present at a version, or absent. A call without a session records
// nothing and is authorized for nothing. The decisions are pure functions
// ([DecideWrite], [DecideEdit]):
//
//	prior state     write intent              edit intent
//	no owner        createIfAbsent            FS_NOT_OBSERVED
//	unseen          createIfAbsent            FS_NOT_OBSERVED
//	absent          createIfAbsent            FS_NOT_FOUND
//	present{v}      replaceIfVersion{v}       guard{v}
//
// The tools record present{stat version} after a successful read, write or
// edit and absent when a read finds nothing; nothing else records. The state
// is in memory only: a resumed session starts empty.
//
// # Versions
//
// A version is "<dev>:<ino>:<size>:<mtimeNs>:<ctimeNs>" from a stat that
// follows symlinks: not a hash and not mtime alone. Atomic replacement changes
// the inode, so even a same-size rewrite with the mtime restored changes it.
//
// # Provider
//
// [Local] resolves a path to a [Target] (display path lexical, key = realpath
// or realpath of the nearest existing ancestor plus the missing suffix),
// reads text, and writes and edits with the version compare and the write
// under one per-target lock: an in-process semaphore per key plus an
// exclusive flock(2) on the target's nearest existing directory (see
// targetLocks for why the directory). Writes are atomic and pinned: the
// target's directory is opened without following any symlink (openat2
// RESOLVE_NO_SYMLINKS; missing directories are created one by one under their
// pinned parent) and every later step is relative to that descriptor, so a
// directory swapped for a symlink after resolution cannot redirect a write.
// In it: a private 0700
// staging directory in the target's directory, a 0600 temp file created
// exclusively, write, fsync, chmod to the existing file's mode, then rename;
// a guarded create publishes with link(2), which never replaces, so a
// competitor that created the file meanwhile wins. On any refusal or failure
// the old file is untouched and the staging directory is removed.
//
// # Errors
//
// Every refusal is a *pipeline.Error with Name "FsError" and an FS_* code, so
// pipeline.CodeOf yields {name, code} for the persisted result. Messages are the
// provider vocabulary; the tools add the retry remedies.
//
// # Sandbox fence
//
// [Local.Fence] applies a call's sandbox mode to a mutation before the lock:
// danger-full-access is unfenced, read-only denies every mutation and
// workspace-write requires containment under the workspace root, /tmp or the
// OS temp directory (canonical paths). Reads are never fenced.
//
// # Imports
//
// fsobserve imports pipeline (the coded error) and sandbox (modes, the
// fence's symlink check); it must not import tools/... (the file tools stand
// on it), stack, or harness/... (test tooling).
package fsobserve
