// Package compaction is upstream's automatic conversation compaction
// (dsh-compaction-basic, with the surface pricing of dsh-token-meter): when
// a model call fails because the request overflowed the model's context
// window, the head of the conversation is condensed by a summary model
// call into one checkpoint message that replaces it, and the call is
// retried in the same step.
//
// # The surface and its prices
//
// [Fold] folds a session log into its model-visible surface: every
// user/message, assistant/message and tool/result carrying a surfaceOp,
// appended at the tail ("append") or replacing a range of current nodes
// ({op: "replace", start, end}, counted in Replacements). Each node is
// priced by the meter's fixed heuristic ([EstimateMessage]): text and
// reasoning ceil(len/4)+4, a tool call ceil(len(name)/4) +
// ceil(len(arguments)/4) + 4, a tool result its content's price + 4, any
// other block 4 + ceil(len(JSON)/4), and 4 per message; lengths are UTF-16
// code units, as JavaScript counts them.
//
// # What is compacted
//
// [SelectRange] keeps the fewest last nodes priced at least retainTokens
// in total, moves the cut earlier while it would split a tool call from
// its result, and compacts everything before it (nothing when the cut
// reaches the head). A context-overflow recovery keeps no tail
// (retainTokens 0): the newest tool result stays verbatim only because the
// call that asked for it does.
//
// # The transaction
//
// [CompactRegion] runs inside the open turn and refuses while another
// compaction is open (a compaction/start without its compaction/end, not
// followed by a session/end-seed). It appends compaction/start
// {compactionId, turn}; asks the summary ([Summarize]: one model call over
// the range's messages and [Instruction], checked by [SummaryOf]); frames
// it ([Frame]: [CheckpointPreamble], the summary between
// <compacted-summary> tags), which must be priced strictly below the range;
// checks the surface did not change meanwhile; then appends
// compaction/summary (summary, rawOutput, llmStreamCall, shadowedRange,
// shadowedSeqs, shadowedTokenCount, provider, model, maxTokens, usage), the
// checkpoint user/message of source {kind: plugin, plugin: compact,
// compactionId} replacing the range (sourceEventSeqs: the start, the
// summary and the range), and compaction/end {compactionId, turn}. A
// failure after compaction/start closes it once with compaction/end
// carrying the error's text.
//
// # When
//
// [Engine.Overflow] is upstream's agent/request-error listener: a call
// that failed with CONTEXT_WINDOW_EXCEEDED, on a session whose last
// request header names a provider and model, at most maxOverflowRetries
// times until the next assistant message or turn end, compacts and asks
// for a retry when the surface was replaced (also when the compaction
// failed after that); otherwise the original failure stands and the
// reason is returned as a warning. The summary call takes the policy's
// summarization route when set, else the conversation's, capped at
// maxTokens.
//
// # Configuration
//
// [Config] is upstream's BasicCompactionConfig; [Resolve] validates it as
// upstream does at plugin load (ratios in (0, 1], retainRatio or
// retainTokens, retainRatio below thresholdRatio, the summarization route
// as a pair) and applies upstream's defaults (0.8, 0.16, 8192, 1, 1,
// auto). Of the policy, the overflow recovery reads maxOverflowRetries,
// maxTokens, the summarization route and auto; the ratios, retainTokens
// and compactionRetries are the pressure compaction's (below).
//
// # Not ported
//
// Upstream's per-model overrides (modelPolicies), the between-step
// pressure compaction (agent/pre-step: thresholdRatio, retained tail,
// compactionRetries; it needs the request envelope's price and the
// adapter's context window), the manual /compact command (compactNow)
// and the tool-result pruner (dsh-compaction-tool-result-pruner, not
// mounted by the compositions replayed) are not ported.
//
// # Imports
//
// pipeline/session (the log and its event kinds) and internal/jsjson
// (JavaScript's JSON and string lengths); product code, composed by the
// agent loop that drives the model.
package compaction
