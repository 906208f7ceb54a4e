package stack_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/served"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// echoConfig and newEcho are a toy tool package as docs/stack.md (Adding a
// tool) writes one: one constructor of the one shape.
type echoConfig struct {
	// SafetyStack marks the toy as a tool of the safety stack.
	SafetyStack bool
	// Closed counts the calls of its Close.
	Closed *int
}

// --8<-- [start:constructor]
func newEcho(cfg echoConfig) ([]toolreg.Tool, error) {
	return []toolreg.Tool{{
		Def: pipeline.Tool{Name: "echo", Description: "Echo the text.", ConcurrencySafe: true,
			Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"quick":{"type":"boolean"}},"required":["text"]}`),
			Run: func(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
				var a struct{ Text string }
				if err := call.DecodeArgs(&a); err != nil {
					return pipeline.Output{}, err
				}
				return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(a.Text)}}, nil
			}},
		Section: &toolreg.Section{Name: "tool:echo", Order: 105, Text: "Use echo to repeat a text."},
		Yields:  func(args json.RawMessage) bool { return !strings.Contains(string(args), `"quick":true`) },
		Close: func() error {
			if cfg.Closed != nil {
				*cfg.Closed++
			}
			return nil
		},
		SafetyStack: cfg.SafetyStack,
	}}, nil
}

// --8<-- [end:constructor]

// TestAddATool composes the toy tool with one line, as docs/stack.md shows:
// it runs; its registration places its prompt section by its order (equal
// orders in registration order: after bash's), applies its yield rule,
// declares its concurrency and is closed with the stack; served from a
// recording when named, and never when it is a tool of the safety stack.
func TestAddATool(t *testing.T) {
	closed := 0
	// --8<-- [start:composition]
	s, _, _ := composed(t, stack.Config{Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever,
		Tools: []toolreg.Constructor{toolreg.Bind(newEcho, echoConfig{Closed: &closed})}})
	// --8<-- [end:composition]
	if r := s.Execute(context.Background(), "c1", "echo", json.RawMessage(`{"text":"hi"}`)); r.IsError || r.Text() != "hi" {
		t.Fatalf("echo: %+v", r)
	}
	names, text := promptSections(t, s)
	if names != "tool:read,tool:write,tool:edit,tool:bash,tool:echo,tool:jobs" || text["tool:echo"] != "Use echo to repeat a text." {
		t.Errorf("sections %s", names)
	}
	if !s.Yields("echo", json.RawMessage(`{"text":"a"}`)) || s.Yields("echo", json.RawMessage(`{"text":"a","quick":true}`)) {
		t.Error("echo's yield rule does not apply")
	}
	for _, d := range s.Definitions() {
		if d.Name == "echo" && !d.ConcurrencySafe {
			t.Error("echo lost its concurrency")
		}
	}
	if err := s.Close(); err != nil || closed != 1 {
		t.Errorf("close: %v, echo closed %d times", err, closed)
	}

	src := func(c *pipeline.Call) (served.Recorded, error) {
		return served.Recorded{Name: "echo", Arguments: c.Args(), Content: []pipeline.Block{pipeline.TextBlock("RECORDED")}}, nil
	}
	srv := newComposed(t, stack.Config{ExtraTools: stack.ExtraTools{
		Served: &stack.ServedConfig{Tools: []string{"echo"}, Source: src},
	},
		Tools: []toolreg.Constructor{toolreg.Bind(newEcho, echoConfig{})},
	})
	if r := srv.Execute(context.Background(), "c1", "echo", json.RawMessage(`{"text":"hi"}`)); r.Text() != "RECORDED" || strings.Join(srv.Served(), ",") != "echo" {
		t.Errorf("served echo: %q, served %v", r.Text(), srv.Served())
	}
	if names, _ := promptSections(t, srv); !strings.Contains(names, "tool:echo") {
		t.Errorf("the served echo lost its section: %s", names)
	}

	ws := t.TempDir()
	_, err := stack.New(stack.Config{Workspace: ws, Log: sessiontest.New(t, "s", ws), Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever,
		ExtraTools: stack.ExtraTools{
			Served: &stack.ServedConfig{Tools: []string{"echo"}, Source: src},
		},
		Tools: []toolreg.Constructor{toolreg.Bind(newEcho, echoConfig{SafetyStack: true, Closed: &closed})},
	})
	if !errors.Is(err, served.ErrSafetyStack) || closed != 2 {
		t.Errorf("a served echo of the safety stack: %v (closed %d times)", err, closed)
	}
}
