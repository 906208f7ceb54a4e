package workflow

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// TestRenderClipsInUTF16Units: the return value is JSON indented by two,
// clipped at maxResultChars UTF-16 code units (an emoji counts two) with
// upstream's truncation line; one agent is "1 agent". Planted bugs caught:
// clipping in bytes or runes, "1 agents".
func TestRenderClipsInUTF16Units(t *testing.T) {
	r := &runState{w: &tool{cfg: Config{MaxResultChars: 10}}, name: "w"}
	got, err := r.render(json.RawMessage(`"😀😀😀😀😀😀"`), 1)
	if err != nil {
		t.Fatal(err)
	}
	// "\"😀😀😀😀😀😀\"" is 14 units: the quote and four emoji and a half
	// fit in 10; the half is cut, leaving a lone surrogate's replacement.
	want := "workflow \"w\" completed (1 agent).\nReturn value:\n\"😀😀😀😀\uFFFD\n… [truncated: 4 more characters]"
	if got != want {
		t.Errorf("render\n got %q\nwant %q", got, want)
	}
	r.w.cfg.MaxResultChars = 0
	got, _ = r.render(json.RawMessage(`{"a":[1,2]}`), 2)
	if !strings.HasSuffix(got, "(2 agents).\nReturn value:\n{\n  \"a\": [\n    1,\n    2\n  ]\n}") {
		t.Errorf("render %q", got)
	}
}

// TestFinishValueAndLossyResult: the tool's value is {runId, agentsStarted,
// result} in upstream's key order (a run_code program reads its keys), the
// result's own order kept; a completion the runtime marks lossy (a -0 in
// the return value) fails the call with upstream's output error and code.
// Planted bugs caught: the keys sorted (json.Marshal of a map), the lossy
// mark ignored (the -0 rendered as 0).
func TestFinishValueAndLossyResult(t *testing.T) {
	r := &runState{w: &tool{}, name: "w", runID: "RUN"}
	out, err := r.finish(context.Background(), noderuntime.Result{Value: json.RawMessage(`{"value":{"b":1,"a":2},"agentsStarted":0}`)})
	if err != nil || string(out.Value) != `{"runId":"RUN","agentsStarted":0,"result":{"b":1,"a":2}}` {
		t.Errorf("value %s (%v)", out.Value, err)
	}
	_, err = r.finish(context.Background(), noderuntime.Result{Value: json.RawMessage(`{"value":[0],"agentsStarted":0,"lossy":true}`)})
	if err == nil || pipeline.ErrorMessage(err) != `tool "workflow" returned invalid output: value is not lossless JSON` || !pipeline.HasCode(err, "INVALID_TOOL_OUTPUT") {
		t.Errorf("a lossy value: %v", err)
	}
}
