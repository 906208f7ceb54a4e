package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/pipeline"
)

// TestTimeoutWithBodyStillRunningHasNoDataRace: when the timeout wrapper
// returns while the body goroutine still runs, the registry must not share
// unsynchronised state with that goroutine (run with -race). On a loaded
// machine the 5 ms deadline can pass before the body is entered (the call is
// then aborted before dispatch and nothing outlives the wrapper), so the
// scenario is repeated until the body did run past the deadline.
func TestTimeoutWithBodyStillRunningHasNoDataRace(t *testing.T) {
	const attempts = 50
	for i := 0; i < attempts; i++ {
		if bodyOutlivedTimeout(t) {
			return
		}
	}
	t.Fatalf("in %d attempts the body never started before the 5 ms deadline", attempts)
}

// bodyOutlivedTimeout runs one call whose body ignores its context under a
// 5 ms timeout, releases the body after Execute returned, waits until the
// body goroutine settled, and reports whether the body ran.
func bodyOutlivedTimeout(t *testing.T) bool {
	t.Helper()
	r := pipeline.NewRegistry()
	release := make(chan struct{})
	started := make(chan struct{})
	settled := make(chan struct{})
	if _, err := r.Register(pipeline.Tool{Name: "slow", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		close(started)
		<-release // ignores its context: outlives the deadline
		return pipeline.Output{}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	r.OnExecute(pipeline.Timeout(5 * time.Millisecond))
	r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
		defer close(settled) // the body goroutine is done, whether or not the body ran
		return next(ctx)
	})
	r.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
		return next()
	})
	res := waittest.Call(t, "the call to return at its 5 ms timeout", func() pipeline.Result {
		return r.Execute(pipeline.NewCall("c1", "slow", json.RawMessage(`{}`), nil, context.Background()))
	})
	close(release)
	waittest.Closed(t, settled, "the released body's goroutine to settle")
	if res.Error == nil || res.Error.Info == nil || res.Error.Info.Code != pipeline.CodeToolTimeout {
		t.Fatalf("result = %+v, want TOOL_TIMEOUT", res)
	}
	select {
	case <-started:
		return true
	default:
		return false
	}
}
