package replay

import (
	"strings"

	"github.com/dshsim/dshsim/harness/replay/fixture"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// hydrates reports whether the recording's suite hydrates its fixture
// before the run: upstream's JSON-RPC suite (sdk.snapshot.ts
// hydrateReplayFixtures) writes every "{{cwd}}" of session.jsonl as the
// run's cwd, and gives the prompt its cwd the same way, so the model's
// replies name the run's own paths.
func hydrates(rec *recording.Recording) bool { return rec.Frontend == recording.JSONRPC }

// hydrate is s with every cwd token as ws.
func hydrate(s, ws string) string { return strings.ReplaceAll(s, fixture.CwdToken, ws) }

// hydrateReply is r with every cwd token of its texts, tool calls and
// streamed chunks as ws (a copy: the script is not changed).
func hydrateReply(r recording.Reply, ws string) recording.Reply {
	r.Blocks = append([]recording.Block(nil), r.Blocks...)
	for i, b := range r.Blocks {
		r.Blocks[i].Text, r.Blocks[i].Arguments = hydrate(b.Text, ws), hydrate(b.Arguments, ws)
	}
	r.ToolCalls = append([]recording.ToolCall(nil), r.ToolCalls...)
	for i, c := range r.ToolCalls {
		r.ToolCalls[i].Arguments = hydrate(c.Arguments, ws)
	}
	chunks := make([]map[string]any, len(r.Chunks))
	for i, c := range r.Chunks {
		chunks[i] = hydrateValue(c, ws).(map[string]any)
	}
	r.Chunks = chunks
	return r
}

// hydrateValue copies a decoded JSON value with its strings hydrated.
func hydrateValue(v any, ws string) any {
	switch x := v.(type) {
	case string:
		return hydrate(x, ws)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = hydrateValue(e, ws)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = hydrateValue(e, ws)
		}
		return out
	}
	return v
}
