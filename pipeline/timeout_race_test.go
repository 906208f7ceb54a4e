package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
)

// TestTimeoutWithBodyStillRunningHasNoDataRace: when the timeout wrapper
// returns while the body goroutine still runs, the registry must not share
// unsynchronised state with that goroutine (run with -race).
func TestTimeoutWithBodyStillRunningHasNoDataRace(t *testing.T) {
	r := pipeline.NewRegistry()
	release := make(chan struct{})
	finished := make(chan struct{})
	if _, err := r.Register(pipeline.Tool{Name: "slow", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		defer close(finished)
		<-release // ignores its context: outlives the deadline
		return pipeline.Output{}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	r.OnExecute(pipeline.Timeout(5 * time.Millisecond))
	r.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
		return next()
	})
	res := r.Execute(pipeline.NewCall("c1", "slow", json.RawMessage(`{}`), nil, context.Background()))
	close(release)
	<-finished
	if res.Error == nil || res.Error.Info == nil || res.Error.Info.Code != pipeline.CodeToolTimeout {
		t.Fatalf("result = %+v, want TOOL_TIMEOUT", res)
	}
}
