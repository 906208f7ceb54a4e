// Package todo is the model-facing todo_write tool (upstream's tool-todo):
// the model sends its whole task list, the tool checks it, appends one
// todo/write event {"todos":[{content,status}...]} to the calling agent's
// session log (between the call's tool/call and tool/result) and answers
// "Updated todo list: <p> pending, <i> in progress, <c> completed."
//
// # Checks
//
// After the pipeline's schema check (todos required, items
// {content, status} with status pending, in_progress or completed, no
// other keys), each content is trimmed: an empty one is
// "invalid todo: `content` must be a non-empty string", a repeated one
// "invalid todos: duplicate content <JSON string>"; with
// Config.AllowParallelInProgress false more than one in_progress item is
// "invalid todos: at most one task may be in_progress (got <n>)". A call
// without an agent session is "todo_write requires an owning agent session".
// Nothing is logged for a refused list.
//
// The description has two variants, for parallel work allowed (the
// acp-agent's setting) or not, upstream's texts.
//
// # Imports
//
// pipeline, internal/jsjson (JSON.stringify of a duplicate) and
// tools/toolreg (the registration) only; never stack, sandbox or harness.
package todo
