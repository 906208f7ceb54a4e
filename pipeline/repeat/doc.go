// Package repeat is upstream's repeated-tool-call reminder: an advisory
// post-execute listener that counts, per agent, consecutive tool calls with
// the same name and canonical arguments and, when a run reaches a
// threshold, adds a reminder for the model's next step. It never blocks or
// rewrites a call.
//
// # Counting
//
// Every call that reaches the post-execute stage counts, denied ones
// included (a model hammering a denied call is the loop worth breaking).
// The key is the tool name and the arguments parsed as JSON (the raw text
// when they are not JSON), written with every object's keys sorted
// (JavaScript's Object.keys().sort(), then JSON.stringify). A call with a
// different key starts a new run of 1; [Reminder.Reset] (the agent loop
// calls it at a pre-step that enters a user's message) forgets the run.
//
// # Reminders
//
// At the first threshold (default 3) the message is [Gentle]; at every
// later one (default 5 and 8) it is [Detailed], naming the tool, the run
// length and the canonical arguments (cut at 500 UTF-16 code units, with
// "… (+<k> more chars)"). The message is one context message of plugin
// [Plugin], form "notice", summary "<tool> × <n>", placed before the
// contexts of the listeners inside this one (the hook bridges), on an
// accepted and on a blocked result alike.
//
// # Imports
//
// The pipeline (its listener and context message) and internal/jsjson
// (JavaScript's JSON); product code, composed by the stack.
package repeat
