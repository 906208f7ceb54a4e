package askuser_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/toolschema"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/askuser"
)

func run(t *testing.T, tool pipeline.Tool, agent *pipeline.Agent, args string) pipeline.Result {
	t.Helper()
	return pipelinetest.Registry(t, tool).Execute(pipeline.NewCall("q1", askuser.Name, json.RawMessage(args), agent, context.Background()))
}

const question = `{"questions":[{"id":"cuda-fallback","header":"Deployment","question":"Should deployment use the CUDA fallback?"}]}`

// TestDelegatedCallerIsRefused: a child's question never reaches the
// answerer; upstream's VERBATIM refusal with its name and code.
func TestDelegatedCallerIsRefused(t *testing.T) {
	asked := false
	tool := def(func(ctx context.Context, qs []askuser.Question) ([]askuser.Answer, error) {
		asked = true
		return []askuser.Answer{{ID: qs[0].ID, Selected: []string{"yes"}}}, nil
	})
	dir := t.TempDir()
	log, err := session.Create(filepath.Join(dir, "child.jsonl"), session.Header{ID: "c", ParentSession: "p", Origin: "subagent", DelegationDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	res := run(t, tool, &pipeline.Agent{ID: "c", Session: log}, question)
	want := "Error: human interaction is unavailable while the calling agent is owned by another live agent; include the unresolved question or decision in the child agent's final result"
	if res.Text() != want || res.Error.Info == nil || res.Error.Info.Name != "UserQuestionError" || res.Error.Info.Code != "DELEGATED_CALLER" {
		t.Errorf("child: %q %+v", res.Text(), res.Error)
	}
	if asked {
		t.Error("the answerer was asked for a child")
	}
	root := &pipeline.Agent{ID: "r", Session: sessiontest.New(t, "r", "")}
	if res := run(t, tool, root, question); res.Text() != `{"answers":[{"id":"cuda-fallback","selected":["yes"]}]}` {
		t.Errorf("root: %q", res.Text())
	}
	if res := run(t, def(nil), root, question); res.Text() != "Error: no user-questions provider is registered" || res.Error.Info.Code != "NO_PROVIDER" {
		t.Errorf("no answerer: %q", res.Text())
	}
	if res := run(t, tool, root, `{"questions":[]}`); res.Error == nil || res.Error.Info == nil || res.Error.Info.Code != "EMPTY_QUESTIONS" {
		t.Errorf("no question: %q", res.Text())
	}
}

func TestSchemaAsRecorded(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "transcripts", "subagent-child-question-rejection", "tool-schemas.expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var side struct {
		Initial []json.RawMessage `json:"initial"`
	}
	json.Unmarshal(data, &side)
	var exp []toolschema.Expected
	for _, raw := range side.Initial {
		var n struct{ Name string }
		json.Unmarshal(raw, &n)
		exp = append(exp, toolschema.Expected{Name: n.Name, Raw: raw})
	}
	tool := def(nil)
	rep := toolschema.Compare(exp, []toolschema.Schema{{Name: tool.Name, Description: tool.Description, Parameters: tool.Parameters}})
	if len(rep.Mismatches) > 0 || len(rep.Compared) != 1 {
		t.Errorf("compared %v: %v", rep.Compared, rep.Mismatches)
	}
}

// def is the definition New registers over ask.
func def(ask askuser.Answerer) pipeline.Tool {
	regs, _ := askuser.New(askuser.Config{Ask: ask})
	return regs[0].Def
}
