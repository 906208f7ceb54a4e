package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
)

// A registry with one tool, a listener that asks, an approver that allows
// once, and a guard that vetoes paths under /etc/.
func ExampleRegistry_Execute() {
	r := pipeline.NewRegistry()
	r.Register(pipeline.Tool{Name: "touch", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		var a struct{ Path string }
		if err := call.DecodeArgs(&a); err != nil {
			return pipeline.Output{}, err
		}
		return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock("would touch " + a.Path)}}, nil
	}})
	r.OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
		return pipeline.Ask("touch a file"), nil
	})
	r.SetApprover(allowOnce{})
	r.AddGuard(func(ctx context.Context, call *pipeline.Call) (string, bool) {
		if strings.Contains(string(call.Args()), `"/etc/`) {
			return "system files are protected", true
		}
		return "", false
	})
	agent := &pipeline.Agent{ID: "agent"}
	for _, path := range []string{"/tmp/a", "/etc/passwd"} {
		args, _ := json.Marshal(map[string]string{"path": path})
		res := r.Execute(pipeline.NewCall("c1", "touch", args, agent, context.Background()))
		fmt.Println(res.Text())
	}
	// Output:
	// would touch /tmp/a
	// Error: system files are protected
}

type allowOnce struct{}

func (allowOnce) Request(context.Context, pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	return pipeline.AllowedOnce, nil
}
