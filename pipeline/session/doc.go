// Package session is the append-only session log (JSON Lines).
//
// Line 1 is the header {"type":"session","version":0,"id","createdAt","cwd",
// "delegationDepth"}; every later line is one event {type, seq, time, data} with
// optional sourceEventSeqs and surfaceOp. The log is the single source of truth
// for session state (sandbox mode, approval policy, presets): readers fold it on
// every request and keep no process state.
//
// # Kinds and data
//
// An event's Type is one of the kinds of kinds.go ([KindTurnStart],
// [KindToolResult], ...): each kind is spelled there and nowhere else
// outside tests. The data of the events an agent's loop writes and the
// runtime reads back (turns and steps, a turn's end and its [Failure], a
// model call's retry, tool calls, the model's chunks and messages) are the
// types of payload.go, in upstream's key order; those made of the
// pipeline's blocks (a user message, a tool result) are in package
// pipeline.
//
// # Durability
//
// Each event is written with exactly one write(2) on a descriptor opened with
// O_APPEND, under an exclusive flock(2) of the file, so concurrent appenders —
// goroutines, several opened descriptors, several processes — never interleave
// bytes and never reuse a seq: before writing, an appender scans what others
// appended since its own last write. A crash in the middle of a write leaves a
// torn last line; [Read] reports it with its line number and leaves it out, and
// the next append starts with a newline that terminates it, so the torn bytes
// are never merged into the next event.
//
// # Checks
//
// A [Check] added to a Log ([Log.AddCheck]) vets each later append through
// that Log before anything is written: its error refuses the append and
// the log does not change, as upstream's synchronous dispatch validation
// rejects an append (the persistent bash's sandbox-mode fence is one).
// Adding a check takes the append lock, so an append in progress is
// written first. Appenders holding another descriptor are not vetted.
//
// # Our keys
//
// Our stack writes the sandbox facts of a call's run (the backend that ran,
// what it cannot govern) into the data of its tool/result and of a nested
// call's tool/code-dispatch, beside upstream's keys. The log keeps them;
// what shows an event as upstream logs it (session_event_read, a recording
// written from our log) leaves them out (sessionquery.UpstreamView).
//
// # Imports
//
// A leaf: session imports nothing of this module. It lives beside the
// pipeline, not in the test harness, because the runtime writes it: the
// pipeline's calls, approval, policy and the stack append to it and fold it.
package session
