// Package acpwire compares the lines of a recording's stdout.expected.jsonl
// (the agent's ACP frames) that carry a tool-boundary fact with the frames
// the replay would have sent, and says for every other kind of line why it is
// not compared.
//
// # Line kinds
//
// [Classify] gives every line one [Kind]. The table [Kinds] says per kind
// whether it is compared and, if not, why:
//
//   - session/request_permission (compared): the stack asked the user about
//     this tool call; the whole frame but its JSON-RPC id (the tool call id,
//     the offered options in order, the session token);
//   - the prompt result (compared): stopReason end_turn, cancelled or
//     max_tokens, or a JSON-RPC error, per prompt;
//   - the initialize result, the session/new result and agent_message_chunk
//     updates (not compared, reasons in the table);
//   - tool_call and tool_call_update updates, and any other kind: the
//     recorded bridge never sent them, so a line of such a kind is flagged,
//     never skipped silently.
//
// JSON-RPC ids are left out of every comparison: upstream's normaliser maps
// them to first-seen ordinals of raw ids shared by requests and responses, an
// artifact of the wire, not of the tool stack.
//
// # Imports
//
// The standard library and package projection (its field diff).
package acpwire
