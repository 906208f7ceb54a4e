package served

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
)

func TestSafetyStackIsRefused(t *testing.T) {
	src := func(string) (Recorded, bool) { return Recorded{}, false }
	for _, name := range SafetyStack {
		if _, err := Wrap(pipeline.Tool{Name: name}, src); !errors.Is(err, ErrSafetyStack) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Wrap(pipeline.Tool{Name: "pwsh"}, nil); err == nil {
		t.Fatal("a served tool without a source was accepted")
	}
}

func TestServe(t *testing.T) {
	recs := map[string]Recorded{
		"ok":   {Name: "pwsh", Arguments: json.RawMessage(`{"command": "x", "n": 1.0}`), Content: []pipeline.Block{pipeline.TextBlock("PWSH_OK")}, Meta: json.RawMessage(`{"m":1}`)},
		"err":  {Name: "pwsh", Arguments: json.RawMessage(`{"command":"x"}`), IsError: true, Content: []pipeline.Block{pipeline.TextBlock("Error: boom")}},
		"code": {Name: "pwsh", Arguments: json.RawMessage(`{"command":"x"}`), IsError: true, Content: []pipeline.Block{pipeline.TextBlock("Error: coded")}, Error: &pipeline.ErrorInfo{Name: "ShellError", Code: "X"}},
		"tool": {Name: "other", Arguments: json.RawMessage(`{"command":"x"}`)},
	}
	tool, err := Wrap(pipeline.Tool{Name: "pwsh", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"n":{"type":"number"}},"required":["command"]}`)},
		func(id string) (Recorded, bool) { r, ok := recs[id]; return r, ok })
	if err != nil {
		t.Fatal(err)
	}
	reg := pipelinetest.Registry(t, tool)
	run := func(id, args string) pipeline.Result {
		return reg.Execute(pipeline.NewCall(id, "pwsh", json.RawMessage(args), nil, context.Background()))
	}
	if r := run("ok", `{"n":1,"command":"x"}`); r.IsError || r.Text() != "PWSH_OK" || string(r.Meta) != `{"m":1}` {
		t.Fatalf("ok: %+v", r)
	}
	if r := run("err", `{"command":"x"}`); !r.IsError || r.Text() != "Error: boom" || r.Error.Info != nil {
		t.Fatalf("err: %+v", r)
	}
	if r := run("code", `{"command":"x"}`); !r.IsError || r.Text() != "Error: coded" || r.Error.Info == nil || r.Error.Info.Code != "X" {
		t.Fatalf("code: %+v", r)
	}
	for id, args := range map[string]string{"missing": `{"command":"x"}`, "ok": `{"command":"y","n":1}`, "tool": `{"command":"x"}`} {
		if r := run(id, args); !r.IsError {
			t.Errorf("%s %s served: %+v", id, args, r)
		}
	}
	// The schema check still runs before the served body.
	if r := run("ok", `{"n":1}`); !r.IsError || r.Text() != `Error: invalid arguments: missing required property "command"` {
		t.Fatalf("schema: %+v", r)
	}
}
