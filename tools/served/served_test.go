package served

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// TestSafetyStackIsRefused: a registration of the safety stack is never
// wrapped, whatever its name; one outside it is, and keeps everything but
// its body.
func TestSafetyStackIsRefused(t *testing.T) {
	src := Table(nil)
	for _, name := range []string{"bash", "pwsh"} {
		if _, err := Wrap(toolreg.Tool{Def: pipeline.Tool{Name: name}, SafetyStack: true}, src); !errors.Is(err, ErrSafetyStack) || err.Error() != "served "+name+": "+ErrSafetyStack.Error() {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Wrap(toolreg.Tool{Def: pipeline.Tool{Name: "pwsh"}}, nil); err == nil {
		t.Fatal("a served tool without a source was accepted")
	}
	sec := &toolreg.Section{Name: "tool:pwsh", Order: 105, Text: "x"}
	w, err := Wrap(toolreg.Tool{Def: pipeline.Tool{Name: "pwsh", ConcurrencySafe: true}, Section: sec, Yields: toolreg.NoYield}, src)
	if err != nil || w.Section != sec || w.Yield(nil) || !w.Def.ConcurrencySafe || w.Def.Run == nil {
		t.Fatalf("wrapped %+v, %v", w, err)
	}
}

func TestServe(t *testing.T) {
	recs := map[string]Recorded{
		"ok":   {Name: "pwsh", Arguments: json.RawMessage(`{"command": "x", "n": 1.0}`), Content: []pipeline.Block{pipeline.TextBlock("PWSH_OK")}, Meta: json.RawMessage(`{"m":1}`)},
		"err":  {Name: "pwsh", Arguments: json.RawMessage(`{"command":"x"}`), IsError: true, Content: []pipeline.Block{pipeline.TextBlock("Error: boom")}},
		"code": {Name: "pwsh", Arguments: json.RawMessage(`{"command":"x"}`), IsError: true, Content: []pipeline.Block{pipeline.TextBlock("Error: coded")}, Error: &pipeline.ErrorInfo{Name: "ShellError", Code: "X"}},
		"tool": {Name: "other", Arguments: json.RawMessage(`{"command":"x"}`)},
	}
	tool, err := Wrap(toolreg.Tool{Def: pipeline.Tool{Name: "pwsh", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"n":{"type":"number"}},"required":["command"]}`)}},
		Table(recs))
	if err != nil {
		t.Fatal(err)
	}
	reg := pipelinetest.Registry(t, tool.Def)
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
	for id, c := range map[string]struct{ args, why string }{
		"missing": {`{"command":"x"}`, "the recording has no result for call missing"},
		"ok":      {`{"command":"y","n":1}`, "call ok has other arguments than the recording's"},
		"tool":    {`{"command":"x"}`, "the recording's call tool is of other"},
	} {
		if r := run(id, c.args); !r.IsError || r.Text() != "Error: served pwsh: "+c.why {
			t.Errorf("%s %s served: %+v", id, c.args, r)
		}
	}
	// The schema check still runs before the served body.
	if r := run("ok", `{"n":1}`); !r.IsError || r.Text() != `Error: invalid arguments: missing required property "command"` {
		t.Fatalf("schema: %+v", r)
	}
}

// TestServeNested: a nested call (a run_code program's) gets the served
// value; one whose value the recording does not show fails, naming why,
// where a model's call of the same record is served without a value.
func TestServeNested(t *testing.T) {
	recs := map[string]Recorded{
		"outer:code:1": {Name: "probe", Arguments: json.RawMessage(`{}`), Content: []pipeline.Block{pipeline.TextBlock("P")}, Value: json.RawMessage(`{"b":1,"a":2}`)},
		"outer:code:2": {Name: "probe", Arguments: json.RawMessage(`{}`), Content: []pipeline.Block{pipeline.TextBlock("P")}, ValueNote: "not rendered"},
		"model":        {Name: "probe", Arguments: json.RawMessage(`{}`), Content: []pipeline.Block{pipeline.TextBlock("P")}},
		"outer:code:3": {Name: "probe", Arguments: json.RawMessage(`{}`), Content: []pipeline.Block{pipeline.TextBlock("Error: nope")}, IsError: true},
		"outer:code:4": {Name: "probe", Arguments: json.RawMessage(`{}`), Content: []pipeline.Block{pipeline.TextBlock("P")}},
	}
	tool, err := Wrap(toolreg.Tool{Def: pipeline.Tool{Name: "probe", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
		Table(recs))
	if err != nil {
		t.Fatal(err)
	}
	reg := pipelinetest.Registry(t, tool.Def)
	outer := pipeline.NewCall("outer", "run_code", json.RawMessage(`{}`), nil, context.Background())
	nested := func(id string) pipeline.Result {
		return reg.Execute(pipeline.NewSubCall(outer, id, "probe", json.RawMessage(`{}`), context.Background()))
	}
	if r := nested("outer:code:1"); r.IsError || string(r.Value) != `{"b":1,"a":2}` || r.Text() != "P" {
		t.Fatalf("nested with value: %+v", r)
	}
	if r := nested("outer:code:2"); !r.IsError || r.Text() != "Error: served probe: nested call outer:code:2: the recording does not show the value the program received (not rendered)" {
		t.Fatalf("nested without value: %+v", r)
	}
	if r := nested("outer:code:4"); !r.IsError || r.Text() != "Error: served probe: nested call outer:code:4: the recording does not show the value the program received" {
		t.Fatalf("nested without value or note: %+v", r)
	}
	if r := nested("outer:code:3"); !r.IsError || r.Error.Message != "nope" {
		t.Fatalf("nested error: %+v", r)
	}
	if r := reg.Execute(pipeline.NewCall("model", "probe", json.RawMessage(`{}`), nil, context.Background())); r.IsError || r.Value != nil {
		t.Fatalf("model's call: %+v", r)
	}
}

func TestNestedValue(t *testing.T) {
	// a JSON rendering (the inspect tools') and a lossy one-liner (cordis_run's)
	pretty := func(v json.RawMessage) ([]pipeline.Block, error) {
		var b bytes.Buffer
		if err := json.Indent(&b, v, "", "  "); err != nil {
			return nil, err
		}
		return []pipeline.Block{pipeline.TextBlock(b.String())}, nil
	}
	line := func(v json.RawMessage) ([]pipeline.Block, error) {
		var d struct {
			ID     *string `json:"id"`
			Status string  `json:"status"`
		}
		if err := json.Unmarshal(v, &d); err != nil || d.ID == nil {
			return nil, errors.New("no id")
		}
		return []pipeline.Block{pipeline.TextBlock(*d.ID + " is " + d.Status)}, nil
	}
	text := func(s string) []pipeline.Block { return []pipeline.Block{pipeline.TextBlock(s)} }
	for _, tc := range []struct {
		name    string
		render  Render
		content []pipeline.Block
		outer   string
		want    string // "" an error
	}{
		{"the content's own JSON", pretty, text("{\n  \"z\": 1,\n  \"a\": [\n    true\n  ]\n}"), "not JSON", `{"z":1,"a":[true]}`},
		{"an object of the outer result", line, text("x is up"), `{"run":{"status":"up","id":"x","more":[1]},"other":{"id":"y","status":"up"}}`, `{"status":"up","id":"x","more":[1]}`},
		{"nested deep, in an array", line, text("x is up"), `[1,{"k":[{"id":"x","status":"up"}]}]`, `{"id":"x","status":"up"}`},
		{"the same value twice counts once", line, text("x is up"), `{"a":{"id":"x","status":"up"},"b":{"id":"x","status":"up"}}`, `{"id":"x","status":"up"}`},
		{"two values render alike", line, text("x is up"), `{"a":{"id":"x","status":"up"},"b":{"id":"x","status":"up","n":1}}`, ""},
		{"nothing renders to it", line, text("x is up"), `{"a":{"id":"x","status":"down"}}`, ""},
		{"an outer text that is not JSON", line, text("x is up"), "log line\n{\"id\":\"x\",\"status\":\"up\"}", ""},
		{"no rendering", nil, text("{}"), `{}`, ""},
	} {
		got, err := NestedValue(tc.render, tc.content, tc.outer)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: served %s", tc.name, got)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s %v, want %s", tc.name, got, err, tc.want)
		}
	}
}
