package cordis

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/toolschema"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/tools/code/sdk"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// recorded reads a file of the advanced-toolchain recording, whose
// composition (upstream's advanced overlay) pins the seven tools.
func recorded(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "transcripts", "advanced-toolchain", file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDefinitionsAreTheRecorded: names, descriptions and parameters (key
// order included) are the recorded tool schemas'.
func TestDefinitionsAreTheRecorded(t *testing.T) {
	var side struct {
		Initial []json.RawMessage `json:"initial"`
	}
	if err := json.Unmarshal(recorded(t, "tool-schemas.expected.json"), &side); err != nil {
		t.Fatal(err)
	}
	var expected []toolschema.Expected
	for _, raw := range side.Initial {
		var named struct{ Name string }
		json.Unmarshal(raw, &named)
		if strings.HasPrefix(named.Name, "cordis_") {
			expected = append(expected, toolschema.Expected{Name: named.Name, Raw: raw})
		}
	}
	var ours []toolschema.Schema
	for _, tl := range defs() {
		ours = append(ours, toolschema.Schema{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters})
	}
	rep := toolschema.Compare(expected, ours)
	if len(rep.Mismatches) > 0 || len(rep.Compared) != 7 || len(ours) != 7 {
		t.Fatalf("compared %v, mismatches:\n%s", rep.Compared, strings.Join(rep.Mismatches, "\n"))
	}
	var names []string
	for _, tl := range defs() {
		names = append(names, tl.Name)
		if tl.ConcurrencySafe {
			t.Errorf("%s is concurrency-safe; upstream declares no isConcurrencySafe for the cordis tools", tl.Name)
		}
	}
	if !slices.Equal(names, Names) {
		t.Errorf("registration order %v, Names %v", names, Names)
	}
}

// TestSDKDeclarationsAreTheRecorded: what run_code's SDK declares for each
// tool (its argument type from the parameters, its value type from the
// output schema) is in the recorded system prompt.
func TestSDKDeclarationsAreTheRecorded(t *testing.T) {
	prompt := string(recorded(t, "system-prompt.expected.md"))
	for _, tl := range defs() {
		sec := sdk.Section([]sdk.Tool{{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters, Output: tl.OutputSchema}})
		for _, iface := range []string{"interface ToolArgsMap {\n", "interface ToolOutputMap {\n"} {
			_, rest, ok := strings.Cut(sec, iface)
			member, _, ok2 := strings.Cut(rest, "\n}\n")
			if !ok || !ok2 || !strings.Contains(prompt, "\n"+member+"\n") {
				t.Errorf("%s: %s member not in the recorded prompt:\n%s", tl.Name, strings.TrimSpace(iface), member)
			}
		}
	}
}

// TestPromptSectionIsTheRecorded: the tool:cordis section is a run of
// whole paragraphs of the recorded prompt.
func TestPromptSectionIsTheRecorded(t *testing.T) {
	prompt := string(recorded(t, "system-prompt.expected.md"))
	if !strings.Contains(prompt, "\n\n"+PromptSection+"\n\n") {
		t.Fatal("the tool:cordis section is not whole paragraphs of the recorded prompt")
	}
	if !strings.HasPrefix(PromptSection, "# Dynamic Cordis Plugins\n\n") || strings.HasSuffix(PromptSection, "\n") {
		t.Fatalf("section bounds: %q ... %q", PromptSection[:30], PromptSection[len(PromptSection)-30:])
	}
}

// TestUnservedBodiesRefuse: without a recording to serve from, every body
// refuses, after the schema check.
func TestUnservedBodiesRefuse(t *testing.T) {
	reg := pipelinetest.Registry(t, defs()...)
	args := map[string]string{
		InspectListName: `{}`, InspectQueryName: `{"platform":"host","provider":"Service","method":"listService"}`,
		InspectSelfName: `{}`, DefineName: `{"plugin":{"kind":"new","idPrefix":"snap"},"name":"n","purpose":"p","code":{"host":"return {}"}}`,
		RunName: `{"pluginId":"snap-1","packageId":"pkg-1","mode":"run"}`, StopName: `{"pluginId":"snap-1"}`, UndefineName: `{"pluginId":"snap-1"}`,
	}
	for _, name := range Names {
		r := reg.Execute(pipeline.NewCall("c", name, json.RawMessage(args[name]), nil, context.Background()))
		if !r.IsError || r.Text() != "Error: "+name+": "+ErrNoHost.Error() {
			t.Errorf("%s: %+v", name, r)
		}
	}
	bad := map[string]string{
		InspectQueryName: `{"platform":"mars","provider":"x","method":"y"}`,
		DefineName:       `{"plugin":{"kind":"new","pluginId":"snap-1"},"name":"n","purpose":"p","code":{}}`,
		RunName:          `{"pluginId":"snap-1","packageId":"pkg-1","mode":"restart"}`,
		UndefineName:     `{}`,
	}
	for name, a := range bad {
		r := reg.Execute(pipeline.NewCall("c", name, json.RawMessage(a), nil, context.Background()))
		if !r.IsError || !strings.HasPrefix(r.Text(), "Error: invalid arguments: ") {
			t.Errorf("%s %s: schema not checked: %+v", name, a, r)
		}
	}
}

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name, value, text, err string
	}{
		{DefineName, `{"pluginId":"snap-1","packageId":"pkg-1","name":"Snapshot Marker","purpose":"p","hasHostHalf":true,"hasClientHalf":false}`,
			"Defined snap-1/pkg-1 (Snapshot Marker); it is not running yet. Use cordis_run to activate this Package.", ""},
		{DefineName, `{"pluginId":"snap-1","packageId":"pkg-1","name":"Snapshot Marker","purpose":"p","hasHostHalf":true}`, "", `missing required property "hasClientHalf"`},
		{RunName, `{"status":"running","pluginId":"snap-1","packageId":"pkg-1","pluginRunId":"run-1"}`, "snap-1/pkg-1 is running (run-1).", ""},
		{RunName, `{"status":"starting","pluginId":"a-1","packageId":"pkg-2","pluginRunId":"run-3"}`, "a-1/pkg-2 is starting asynchronously (run-3).", ""},
		{RunName, `{"status":"awaiting-approval","pluginId":"a-1","packageId":"pkg-2","pluginRunId":"run-3"}`, "a-1/pkg-2 is awaiting user approval (run-3).", ""},
		{RunName, `{"status":"running","pluginId":"snap-1","packageId":"pkg-1"}`, "", `expected JSON string field "pluginRunId"`},
		{RunName, `{"status":"running","pluginId":1,"packageId":"pkg-1","pluginRunId":"run-1"}`, "", `expected JSON string field "pluginId"`},
		{RunName, `["snap-1"]`, "", "expected a JSON object"},
		{StopName, `{"pluginId":"snap-1"}`, "Dynamic Plugin snap-1 is stopped; its definition and versions remain.", ""},
		{UndefineName, `{"pluginId":"snap-1","wasRunning":true}`, "Removed dynamic Plugin snap-1 and all of its Packages.", ""},
		{UndefineName, `{"pluginId":"snap-1","wasRunning":true,"extra":1}`, "", `"extra" is not a declared property`},
		{InspectSelfName, `{"mode":"plugins","plugins":[],"n":1.0,"s":"<é>"}`, "{\n  \"mode\": \"plugins\",\n  \"plugins\": [],\n  \"n\": 1,\n  \"s\": \"<é>\"\n}", ""},
		{InspectListName, `"x"`, `"x"`, ""},
		{"bash", `{}`, "", "bash is not a cordis tool"},
	} {
		got, err := Render(tc.name, json.RawMessage(tc.value))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s: error %v, want %q", tc.name, tc.value, err, tc.err)
			}
		case err != nil || len(got) != 1 || got[0].Type != "text" || got[0].Text != tc.text:
			t.Errorf("%s %s: %v %+v\nwant %q", tc.name, tc.value, err, got, tc.text)
		}
	}
}

// TestRenderIsTheRecorded: the recorded results of the cordis calls are
// the renderings of their values (cordis_inspect_self's value is the one
// the recorded program returned, under "inspected").
func TestRenderIsTheRecorded(t *testing.T) {
	results := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(recorded(t, "session.jsonl"))), "\n") {
		var e struct {
			Type string `json:"type"`
			Data struct {
				SubCallID string           `json:"subCallId"`
				Content   []pipeline.Block `json:"content"`
				Message   struct {
					Source struct {
						CallID string `json:"callId"`
					} `json:"source"`
					Content []struct {
						Content []pipeline.Block `json:"content"`
					} `json:"content"`
				} `json:"message"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case "tool/code-dispatch":
			results[e.Data.SubCallID] = e.Data.Content[0].Text
		case "tool/result":
			results[e.Data.Message.Source.CallID] = e.Data.Message.Content[0].Content[0].Text
		}
	}
	var program struct{ Run, Inspected json.RawMessage }
	if err := json.Unmarshal([]byte(results["advanced-code"]), &program); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, id string
		value    json.RawMessage
	}{
		{RunName, "advanced-code:code:1", program.Run},
		{InspectSelfName, "advanced-code:code:2", program.Inspected},
		{DefineName, "advanced-define", json.RawMessage(`{"pluginId":"snap-1","packageId":"pkg-1","name":"Snapshot Marker","purpose":"Exercise the dynamic Cordis Package lifecycle in the snapshot.","hasHostHalf":true,"hasClientHalf":false}`)},
		{UndefineName, "advanced-undefine", json.RawMessage(`{"pluginId":"snap-1","wasRunning":true}`)},
	} {
		got, err := Render(tc.name, tc.value)
		if err != nil || len(got) != 1 || got[0].Text != results[tc.id] {
			t.Errorf("%s: %v %+v\nwant %q", tc.id, err, got, results[tc.id])
		}
	}
	if _, err := Render(RunName, json.RawMessage(`{}`)); err == nil {
		t.Fatal("an empty cordis_run value rendered")
	}
}

// defs are the definitions New registers.
func defs() []pipeline.Tool {
	regs, _ := New(Config{})
	return toolreg.Defs(regs...)
}
