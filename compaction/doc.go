// Package compaction is upstream's automatic conversation compaction
// (dsh-compaction-basic, with the pricing of dsh-token-meter and the
// tool-result pruner of dsh-compaction-tool-result-pruner): between two
// steps, a conversation whose next request is priced at its policy's
// threshold of the model's context window is compacted; and when a model
// call fails because the request overflowed the window, the head of the
// conversation is compacted and the call retried in the same step. A
// compaction condenses a range by a summary model call into one
// checkpoint message that replaces it.
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
// # The meter
//
// [Measure] is upstream's TokenMeter.measure over a log: the request/header
// in force prices the envelope ([EnvelopeOf]: the system prompt
// ceil(len/4)+4, the tool schemas' JSON ceil(len/4)+4), the surface is
// folded as above, and the last assistant message anchors the price (its
// provider usage when no lower than the estimate of the envelope, the
// step's starting surface and the message); the total is the anchor plus
// the surface's growth since, while the envelope is the anchor's, else
// the envelope and the surface estimated. A caller that cannot read an
// input exactly (a replay whose recording scrubbed it) states the least
// and the most it can cost ([Measurement.Unknown], [Measurement.Upper]).
//
// # When
//
// [Engine.Pressure] is upstream's agent/pre-step listener (compactIfNeeded
// "pressure"): on a routed log with no compaction open, when the routed
// model has a context window (none: upstream's "no context capacity"
// warning) and the policy for the route a valid spec ([Policy.Spec]:
// thresholdTokens floor(window x thresholdRatio), retainTokens stated or
// floor(window x retainRatio), below the threshold), a next request priced
// at least the threshold has its tool results pruned (when a pruner is
// mounted, [Engine.WithPruner]) and is measured again; then up to
// compactionRetries+1 compactions each keep the fewest last nodes priced
// at least retainTokens, until the price falls below the threshold (else
// upstream's warning "compaction still above threshold ..."). Warnings let
// the turn go on, as upstream's do. The window is read before the measure
// (upstream measures first; the measure is pure, so the outcome is the
// same, and a model with no window needs no price). A bounded measure
// decides only when its bounds agree: its least at the threshold
// compacts, its most below leaves; bounds across the threshold are an
// [InputError] naming the input, never a guess.
//
// [Engine.Overflow] is upstream's agent/request-error listener: a call
// that failed with CONTEXT_WINDOW_EXCEEDED, on a session whose last
// request header names a provider and model, at most maxOverflowRetries
// times until the next assistant message or turn end, prunes (when
// mounted), compacts and asks for a retry when the surface was replaced
// (also when the compaction failed after that); otherwise the original
// failure stands and the reason is returned as a warning. The summary
// call takes the policy's summarization route when set, else the
// conversation's, capped at maxTokens.
//
// # The pruner
//
// [Pruner] is upstream's ToolResultPruner ([ResolvePruner]: thresholdChars
// 8192, headChars 4096, tailChars 1024, head + marker + tail at most the
// threshold). [Pruner.PruneSession] rewrites every tool result on the
// current surface whose text is longer than thresholdChars code points:
// compaction/prune (shadowedRange, shadowedSeqs, the result's price as
// shadowedTokenCount), then the tool/result replacing it, its content's
// head and tail around [PruneMarker]. It runs only inside a compaction, as
// upstream's does.
//
// # Configuration
//
// [Config] is upstream's BasicCompactionConfig; [Resolve] validates it as
// upstream does at plugin load (ratios in (0, 1], retainRatio or
// retainTokens, retainRatio below thresholdRatio, the summarization route
// as a pair, modelPolicies each naming one route once) and applies
// upstream's defaults (0.8, 0.16, 8192, 1, 1, auto). modelPolicies are
// exact provider/model overrides merged field by field over the top level
// ([Policy.For], upstream's resolveTargetPolicy); both triggers choose the
// policy by the routed model.
//
// # Not ported
//
// The manual /compact command (dsh-command-compact and compactNow: an
// idle session compacted on a user's request, its marker pair outside any
// turn) is not ported: no front end replayed issues it.
//
// # Imports
//
// pipeline/session (the log and its event kinds) and internal/jsjson
// (JavaScript's JSON and string lengths); product code, composed by the
// agent loop that drives the model.
package compaction
