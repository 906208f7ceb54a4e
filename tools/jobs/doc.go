// Package jobs is the background job registry of the bash tool.
//
// # Jobs
//
// A [Registry] tracks processes per owner (a session). Each job gets the id
// "<kind>-<n>" (bash-1, bash-2, ...) counted per owner and keeps running
// after the call that started it returned. Only the owner can see, read or
// kill its jobs. Output is read from the process when it captures its own
// ([OutputOwner]: the bash tool's sandbox/spawn processes), else from two
// bounded [Capture] writers the [Spawner] gets (the tail in memory, the
// complete stream in a private 0600 file once the tail overflows).
//
// # Foreground calls and promotion
//
// Every bash call is registered as a job. A foreground call waits on it with
// [Job.WaitFor]; when the process settles in time the record is dropped with
// [Job.Forget] and no notice is sent. When the timeout expires first the call
// [Job.Promote]s the job instead of killing it: the process really keeps
// running, and when it settles the registry sends one completion [Notice].
// A job started with run_in_background is promoted from the start.
//
// # Reads, kills and notices
//
// [Job.Read] returns the output produced since the previous read (and whether
// some was dropped from memory), with the job's status; [Job.Kill] asks the
// process group to terminate (SIGTERM, then SIGKILL after a grace period).
// Notices go to the Notify callback given to [New], exactly once per promoted
// job, after its output is complete.
//
// # Imports
//
// jobs imports render (outcomes and streams) and sandbox (the report of a
// run); it must not import the tools that use it, stack or harness/... (test
// tooling).
package jobs
