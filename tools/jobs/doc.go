// Package jobs is the background job registry and the model-facing job
// tools job_output, job_kill and job_list (upstream's jobs-local and
// tool-jobs).
//
// # Ids and admission
//
// [Registry.Start] starts a background job: first the admission bound (the
// owner's running and stopping jobs, [DefaultMaxConcurrentJobsPerOwner] by
// default) — a start beyond it fails with upstream's text ([LimitError]) and
// its command never runs —, then the process is spawned, and only a start
// that returned takes an id "<kind>-<n>": counted per kind for the whole
// registry, shared by every owner, never reused. A spawn that fails at once
// takes no number; a runner that could not be started is a job that settles
// as "killed before exit" (upstream learns of it after the start returned).
//
// [Registry.Run] starts an unregistered process (a foreground command): no
// id, no admission, no notice, not listed. When a foreground command
// outlives its timeout, [Registry.Adopt] turns it into a background job of
// the registry; only then does it take a number.
//
// # Statuses, reads, notices
//
// A job is running, stopping (job_kill asked it to end), completed (it
// exited, any code) or killed (a signal, or killed before exit).
// [Job.Read] consumes the output since the previous read. When a job
// settles unreported, its owner gets one [Notice] (upstream's VERBATIM text
// and summary); job_kill, a read of the settled job, a wait pending at
// settlement and [Registry.Close] report a job, and unowned jobs never
// notify. Killing a job terminates its process group (SIGTERM, then SIGKILL
// after the grace). [Registry.RunningPIDs] lists the session leaders of the
// jobs still running ([Leader]), for tooling that watches their processes.
//
// # Observation at yields
//
// With [Options.Gate] the registered jobs are observed as upstream's
// single-threaded Node host observes them: a job's new output and its exit
// reach the registry only at the host's yields ([Gate.Pump]: the caller
// calls it where the host awaits I/O) and while a job_output wait blocks.
// Until then a read shows no new output, a killed job stays "stopping",
// and no notice is sent; a wait that observes the exit reports the job, so
// no notice follows. A process that never started settles at once (Node
// reports a failed spawn on the next tick). Without a gate (the default)
// everything is observed as it happens.
//
// # Tools
//
// [New] returns the registrations of job_output (with wait and timeout_ms),
// job_kill and job_list with upstream's schemas and texts ([NewRegistry] is
// the registry they read). A call sees its own session's
// jobs and the unowned ones; another session's job is "job <id> belongs to
// another session".
//
// # Imports
//
// jobs imports pipeline (the tool shape), tools/toolreg (their
// registrations), render (outcomes and statuses),
// sandbox (the report of a run) and sandbox/outfile (the full-output files'
// names); it must not import the tools that start
// jobs, stack or harness/... (test tooling).
package jobs
