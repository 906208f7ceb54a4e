// Package deepseek is a streaming client of DeepSeek's OpenAI-compatible
// chat completions API (and of any server that speaks it: llama.cpp's
// server, vLLM, Ollama), shaped as upstream's llm-deepseek adapter: the same
// request body, the same translation of the server-sent events into
// [llm.Chunk] values, the same error taxonomy.
//
// # Request
//
// [Body] serializes a [Request] as upstream does, keys in its order: model,
// messages, stream true, stream_options {include_usage: true}, thinking
// {type} and reasoning_effort (effort off sends thinking disabled), tools
// (only when there are any), temperature, max_tokens, stop (only when set).
// Messages: a leading system message; a user message's text blocks joined
// as one string, each of its tool results a {role: tool} message
// ("(no output)" when empty); an assistant message's text joined,
// reasoning_content when it has reasoning, tool_calls when it calls tools.
//
// # Stream
//
// [Client.Stream] POSTs to <BaseURL>/chat/completions with the bearer key,
// content-type, accept text/event-stream and upstream's user-agent, then
// reads the event stream until data: [DONE]. [Translator] turns each data
// payload into chunks, per choice delta: reasoning_content, content, each
// tool call (one block per wire index; id and name once known), the finish
// reason and the usage held until [DONE], where every block ends in opening
// order, then usage, then finish. A stop finish with no block is the
// EMPTY_RESPONSE failure.
//
// # Failures
//
// Every failure is an [*llm.Failure]: an HTTP status as AUTH (401, 403),
// INVALID_REQUEST (413, 400), QUOTA, CONTEXT_WINDOW_EXCEEDED, RATE_LIMIT
// (429), SERVER (5xx) or HTTP_<status>, with the provider's message, status,
// Retry-After (seconds or a date) and request id; TRANSPORT when the server
// cannot be reached or the body breaks off; STREAM_CLOSED when the stream
// ends without [DONE]; MALFORMED_RESPONSE for a payload that is not JSON;
// TIMEOUT when the stream is idle longer than IdleTimeout; ABORTED when the
// caller's context ends; MISSING_CREDENTIAL and INVALID_CREDENTIAL for a key
// that is absent, blank or not sendable in a header. Messages name the
// key's variable, never its value.
//
// # Imports
//
// The standard library, package llm and internal/jstext (JavaScript's string cuts).
package deepseek
