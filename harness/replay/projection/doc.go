// Package projection extracts the tool-boundary projection of a session log,
// normalises it, and compares two projections.
//
// # Projection
//
// Per turn and in log order, the projection keeps:
//
//   - the runtime-context message (user/message with a plugin source): its text;
//     a plugin message other than the runtime context (a hook's context) also
//     its plugin;
//   - a job's completion notice (user/message from plugin tool-jobs): its
//     text and summary, where the model sees it;
//   - tool/call: name, callId, arguments (parsed JSON);
//   - approval/asked: toolName, callId, reason;
//   - approval/decided: outcome;
//   - tool/result: callId, text, isError, meta, error;
//   - hook/invoked: point, dialect, handlerId, matcher;
//   - hook/result: point, handlerId, decision, exitCode, stderrSummary, and
//     durationMs set to 0 (run noise, as upstream's comparison sets it);
//   - todo/write: the list;
//   - goal/change: kind, version, operation, goal, roundsStarted (a
//     clear's cleared ref); not its times, the run's clock, which upstream's
//     normaliser zeroes;
//   - the skill catalog message (a user/message of source kind
//     skill-catalog): its text, entries and whether it is an update;
//   - a user's prompt (user/message of source kind user): its text blocks
//     and, with images, their attachment references: the replay enters
//     input.json's prompt, so a prompt edited in the log differs;
//   - agent/inbox/spliced into the next turn (a prompt or a relayed message
//     queued, and the claim that takes it): target, start, removedCount,
//     and each inserted message's source kind, plugin and text blocks;
//   - turn/end: reason;
//   - another plugin's message (KindContext with its plugin): a reminder's
//     form and summary, a compaction's id and its replacing surfaceOp;
//   - workspace instructions (user/message of source agent-instructions):
//     the texts, one per block, and the source (baseline, identity,
//     changes);
//   - agent/inbox/spliced with outcome canceled: target, start, removedCount;
//   - session/title: title, messageSeqs, source; session/title-llm-request:
//     titleProvider, messageSeqs, route, system, the messages' texts and
//     sources, maxTokens;
//   - a compaction: compaction/start (compactionId, turn), compaction/summary
//     (summary, rawOutput, llmStreamCall, shadowedRange, shadowedSeqs,
//     shadowedTokenCount, maxTokens, usage; not its provider and model, the
//     replay's own model) and compaction/end (compactionId, turn, error);
//   - llm/retry: retryId, step, mode, policyKey, retry, maxRetries, delayMs,
//     failure (not the provider, the replay's own model);
//     llm/retry-started: retryId, step, retry.
//
// A tool/result whose content holds image blocks (read_image) also keeps
// their attachment references (attachments).
//
// Seq, times and message ids are left out (the replay's own). So are the
// event types coverage.go names, each with its reason (the model's chunks
// and messages: the script the replay plays; the model request; step and
// turn boundaries; a splice into the next step, whose timing follows the
// run's; a child's seed end; the preset name; slash commands).
// [ProjectCovered] counts a log's events
// both ways and [Coverage.Note] says so in a replay's notes; an event type,
// a user/message source kind or a splice target the projection neither
// compares nor names is an error naming the event's seq, so nothing is left
// out unsaid.
//
// # Normalisation
//
// Every string value is normalised the way upstream's snapshot normaliser does
// for these fields: each spelling of the session cwd becomes {{cwd}} (longest
// first), spill locators (/tmp/dsh-acp-snap-<9hex>/session-<12hex>/<12hex>-<name>
// and {{cwd}}/.spill/...) become {{spillLocator:<name>}}, and every UUID becomes
// {{sessionId}}. Inside a session_event_read target (from "Session … — …" /
// "Target event seq N:" and its json fence to the closing fence or the spill
// notice) the event's top-level time line becomes {{eventTime}}, and when
// such a target is present every "(Omitted N bytes." becomes
// {{eventOmittedBytes}}, as upstream's normaliser does. Two rules are ours.
// With [Normalizer.EventTimes] (set by a recording's eventTimes setting)
// every ISO time in JavaScript's toISOString form (2026-12-02T23:12:01.765Z)
// becomes {{eventTime}}: session_event_search hits and session_event_read
// neighbours print event times, which upstream's normaliser keeps, so no
// re-run reproduces them. A bash stream's full-output path in upstream's
// shape, /tmp/dsh-subprocess-<6 alnum>/dsh-subprocess-<pid>-<n>-<12hex>-<stdout|stderr>.log,
// becomes {{subprocessOutput:<label>}}; upstream's normaliser leaves it, so
// upstream's own replay of such a recording differs in that path only. The
// text around it is compared as is. Values are compared as parsed JSON, so
// key order and number spelling do not matter.
//
// # Comparison
//
// [Compare] pairs the items of each turn by position. An item matches when all
// its fields are equal; a mismatch lists every differing field path with the
// expected and the got value.
//
// # Imports
//
// Test tooling: it imports harness/replay/recording only; no product package
// imports it.
package projection
