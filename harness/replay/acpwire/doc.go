// Package acpwire compares the lines of a recording's stdout.expected.jsonl
// (the agent's ACP frames) with the frames the replay's bridge would have
// sent, in order.
//
// # Line kinds
//
// [Classify] gives every line one [Kind]. The table [Kinds] says per kind
// what is compared:
//
//   - the initialize result (agent name, version, capabilities) and the
//     session/new result;
//   - session/request_permission: the whole frame but its JSON-RPC id (the
//     tool call id, the offered options in order, the session token);
//   - agent_message_chunk: one per committed assistant text block;
//   - the prompt result (stopReason end_turn, cancelled, max_tokens) and
//     a JSON-RPC error (a refused session/new, a failed prompt): code and
//     message;
//   - tool_call and tool_call_update updates, and any other kind: the
//     recorded bridge never sent them, so a line of such a kind is flagged,
//     never skipped silently.
//
// [Compare] pairs the compared lines with the replay's frames by position:
// kinds and values must agree, so a frame missing, added, or sent in
// another order (a turn's text after its prompt's answer) is a difference;
// the first one is reported. The frames themselves are built here
// ([Initialized], [SessionCreated], [PermissionRequest],
// [AgentText], [Stop], [Failed], [InvalidParams]), spelt as
// upstream's bridge and its SDK spell them.
//
// JSON-RPC ids are left out of every comparison: upstream's normaliser maps
// them to first-seen ordinals of raw ids shared by requests and responses, an
// artifact of the wire, not of the agent.
//
// # Imports
//
// The standard library and package projection (its field diff).
package acpwire
