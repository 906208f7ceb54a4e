// Package llm holds the vocabulary of one streamed model call as upstream's
// agent loop logs it, independent of any provider: the chunks of a reply
// (assistant/chunk), the finished blocks, token usage, the finish reason and
// its failure, the conversation a request carries, and the provider's retry
// policy with its backoff.
//
// # Chunks
//
// A reply streams as [Chunk] values: block-start, text-delta,
// reasoning-delta, tool-call-delta, then block-end for every block in opening
// order, usage (when the provider reported it) and finish. Their JSON is
// upstream's, key order included, because the session log stores them and a
// replay compares the log as text.
//
// # Failures
//
// A call that fails is a [*Failure] (message, code, and for HTTP errors the
// status, the provider's Retry-After in milliseconds and its request id): it
// is logged as an error finish chunk and ends the turn unless the retry
// policy retries it.
//
// # Retries
//
// [RetryPolicy] is upstream's provider retry policy (normal mode: at most
// MaxRetries retries of the codes it lists; always mode: unbounded) and
// [RetryPolicy.Decide] its pure decision: a Retry-After within the maximum
// delay is honoured as it is, otherwise the delay is
// min(initial·2^(retry−1), max) times a jitter factor.
//
// # Imports
//
// The standard library only. Provider adapters (llm/deepseek) build on it.
package llm
