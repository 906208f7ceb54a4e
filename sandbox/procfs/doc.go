// Package procfs reads process facts from a proc mount: the fields of a
// /proc/<pid>/stat line ([ParseStat]), the fields of /proc/<pid>/status
// ([ParseStatus]: capabilities, no_new_privs, memory) and its NSpid line
// ([ParseNSpid]), a mount table ([ParseMountInfo], [Root.MountInfo]), the
// environment a process started with ([Root.Environ]),
// every process of a mount ([Root.All]), and whether a process is alive
// ([Alive]). It is the one place this repository parses them: the
// executor's process-group check, the code runtime's process tree, the
// replay's wait for background jobs, the isolated child's probe, the
// sandbox's check of a workspace for mounts and the tests' outside checks
// all read /proc through it.
//
// A stat line is "pid (comm) state ppid pgrp session ...": comm is the
// program's name as the process set it, and may hold spaces and
// parentheses, so it runs from the first '(' to the line's last ')', and the
// fields after it are counted from there.
//
// The parsers are pure and table-tested; the readers are thin. A [Root] is
// a proc mount's directory: [Proc] is the host's /proc, whose pids are those
// of the PID namespace that mounted it.
//
// # Imports
//
// procfs imports the standard library only: a leaf every part of the
// repository (the sandbox tree included) may stand on.
package procfs
