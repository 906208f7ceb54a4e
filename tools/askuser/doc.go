// Package askuser is the model-facing ask_user_question tool (upstream's
// tool-ask-user over its user-questions service): the schema and texts as
// upstream's recorded sidecars pin them, the service's checks in its order,
// and the refusal of a delegated caller.
//
// # Who may ask
//
// A question is for the person at the client, so only a root agent may
// ask: a delegated child (its session has a parent) is refused before any
// answerer runs, with upstream's VERBATIM UserQuestionError
// DELEGATED_CALLER, and the child is told to carry the question in its
// final result. A root's questions go to the configured [Answerer]; without
// one the call fails closed (NO_PROVIDER).
//
// # Imports
//
// pipeline and tools/toolreg (the registration) only.
package askuser
