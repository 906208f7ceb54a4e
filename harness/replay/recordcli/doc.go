// Package recordcli is the dsh-record command: [Main] parses the flags into
// an options struct, run checks them (one SCENARIO, a directory holding a
// readable input.json; -o given and not existing, its parent a directory:
// each a usage error, exit 2, before anything starts) and records
// with replay.Record: a live model over an OpenAI-compatible chat
// completions server drives our real stack, and the recording is renamed
// into OUT only when complete. cmd/dsh-record only calls [Main].
//
// # Exit status
//
// 0 when the recording was written; 1 when it was not (one line on stderr
// saying why: a rejected or missing key, a failed model call, a dropped or
// malformed stream, a prompt that found no answer); 2 for a usage error;
// 130 or 143 when SIGINT or SIGTERM stopped it (nothing written).
//
// # Imports
//
// Test tooling: harness/replay, harness/cmdline and llm/deepseek (its
// defaults); no product package imports it.
package recordcli
