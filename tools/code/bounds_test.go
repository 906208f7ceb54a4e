package code

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// calls is a program that makes n nested echo calls and returns "done".
func calls(n int) string {
	return fmt.Sprintf(`for (let i = 0; i < %d; i++) await tools.echo({i}); return "done";`, n)
}

// TestNestedCallBound: a program may make exactly MaxNestedCalls nested
// calls; the next one is not dispatched (nothing logged), and the run fails
// with a clear error, even when the program catches the refusal and goes on
// calling.
func TestNestedCallBound(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		want       string // "" for success
	}{
		{"at the bound", calls(3), ""},
		{"past the bound", calls(4), "Error: code run failed (call-limit): more than 3 nested tool calls in one program (the bound of nested calls); echo was not dispatched"},
		{"past the bound, refusals caught", `while (true) { try { await tools.echo({}); } catch (e) {} }`, "Error: code run failed (call-limit): more than 3 nested tool calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{MaxNestedCalls: 3}, realRuntime(t))
			res := e.run(context.Background(), "c1", tc.code)
			if tc.want == "" {
				if res.IsError || res.Text() != "done" {
					t.Fatalf("result %+v", res)
				}
			} else if !res.IsError || !strings.HasPrefix(res.Text(), tc.want) {
				t.Fatalf("text %q, want it to begin %q", res.Text(), tc.want)
			}
			if n := len(e.events()); n != 6 {
				t.Errorf("%d nested-call events logged, want 6 (3 calls)", n)
			}
		})
	}
}

// dispatchBytes is the bytes of the log's nested-call event lines.
func dispatchBytes(t *testing.T, e *env) int64 {
	t.Helper()
	data, err := os.ReadFile(e.log.Path())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte(`"type":"`+session.KindCodeDispatchStart+`"`)) || bytes.Contains(sc.Bytes(), []byte(`"type":"`+session.KindCodeDispatch+`"`)) {
			n += int64(len(sc.Bytes())) + 1
		}
	}
	return n
}

// TestLogByteBound: the nested-call events of one program may fill exactly
// MaxLogBytes of session log; one byte less and the run fails with a clear
// error once the events pass it. The bytes are measured from a run without
// the bound (the same calls log the same lines).
func TestLogByteBound(t *testing.T) {
	free := newEnv(t, Config{}, realRuntime(t))
	if res := free.run(context.Background(), "c1", calls(3)); res.IsError {
		t.Fatal(res.Text())
	}
	size := dispatchBytes(t, free)
	if size == 0 {
		t.Fatal("no nested-call events logged; the bound would prove nothing")
	}
	for _, tc := range []struct {
		bound int64
		want  string
	}{
		{size, ""},
		{size - 1, fmt.Sprintf("Error: code run failed (log-limit): the program's nested tool calls wrote %d bytes of session log, more than %d (the bound of one program's log bytes)", size, size-1)},
	} {
		t.Run(fmt.Sprint(tc.bound), func(t *testing.T) {
			e := newEnv(t, Config{MaxLogBytes: tc.bound}, realRuntime(t))
			res := e.run(context.Background(), "c1", calls(3))
			if tc.want == "" {
				if res.IsError || res.Text() != "done" {
					t.Fatalf("result %+v", res)
				}
				return
			}
			if !res.IsError || !strings.HasPrefix(res.Text(), tc.want) {
				t.Fatalf("text %q, want it to begin %q", res.Text(), tc.want)
			}
		})
	}
}

// TestLogByteBoundStopsTheProgram: past the bound no further call is
// dispatched: a program that calls without end leaves a log of at most the
// bound plus the calls in flight.
func TestLogByteBoundStopsTheProgram(t *testing.T) {
	const bound = 4096
	e := newEnv(t, Config{MaxLogBytes: bound}, realRuntime(t))
	res := e.run(context.Background(), "c1", `while (true) { try { await tools.echo({pad: "x".repeat(100)}); } catch (e) {} }`)
	if !res.IsError || !strings.Contains(res.Text(), "(log-limit)") {
		t.Fatalf("text %q", res.Text())
	}
	if n := dispatchBytes(t, e); n > 2*bound {
		t.Errorf("%d bytes of nested-call events, want about the bound %d", n, bound)
	}
}

// TestBoundsMustBePositive: a negative bound is refused at construction.
func TestBoundsMustBePositive(t *testing.T) {
	for _, cfg := range []Config{{MaxNestedCalls: -1}, {MaxLogBytes: -1}} {
		if _, err := build(cfg, Deps{Registry: newEnv(t, Config{}, nil).reg}); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// stopRunner is a constructed runtime: its program calls echo until a call
// is refused, then waits for the run to be stopped (at most ten seconds)
// and reports why it was.
type stopRunner struct{ cause error }

func (s *stopRunner) Run(ctx context.Context, req noderuntime.Request) (noderuntime.Result, error) {
	for i := int64(1); ; i++ {
		if _, err := req.Call(ctx, i, "echo", json.RawMessage(`{}`)); err != nil {
			break
		}
	}
	select {
	case <-ctx.Done():
		s.cause = context.Cause(ctx)
	case <-time.After(10 * time.Second):
	}
	return noderuntime.Result{Logs: []string{}, Error: &noderuntime.Failure{Kind: noderuntime.KindAbort, Message: "stopped"}}, nil
}

// TestPassingABoundStopsTheProgram: the refusal of a call past a bound is
// not the end of it: the run itself is stopped, its signal carrying the
// bound, so a program that catches refusals cannot spin on.
func TestPassingABoundStopsTheProgram(t *testing.T) {
	for _, cfg := range []Config{{MaxNestedCalls: 2}, {MaxLogBytes: 1}} {
		rt := &stopRunner{}
		e := newEnv(t, cfg, rt)
		res := e.run(context.Background(), "c1", "unused")
		var lim *limitFailure
		if !errors.As(rt.cause, &lim) {
			t.Errorf("%+v: the program was not stopped by the bound (cause %v)", cfg, rt.cause)
		}
		if !res.IsError || !strings.Contains(res.Text(), "-limit)") {
			t.Errorf("%+v: %q", cfg, res.Text())
		}
	}
}
