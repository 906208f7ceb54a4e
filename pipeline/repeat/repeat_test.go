package repeat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/repeat"
)

// rig is a registry whose tool "t" answers ok, with the reminder outside an
// inner listener that adds a context of its own (as a hook bridge does)
// or blocks.
type rig struct {
	reg   *pipeline.Registry
	rem   *repeat.Reminder
	agent *pipeline.Agent
}

func newRig(t *testing.T, inner string) *rig {
	t.Helper()
	r := &rig{reg: pipeline.NewRegistry(pipeline.WithLogf(func(string, ...any) {})), agent: &pipeline.Agent{ID: "root"}}
	if _, err := r.reg.Register(pipeline.Tool{Name: "t", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		return pipeline.Output{Value: json.RawMessage(`"ok"`), Content: []pipeline.Block{pipeline.TextBlock("ok")}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	rem, err := repeat.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	r.rem = rem
	rem.Register(r.reg)
	r.reg.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
		hook := []pipeline.ContextMessage{{Plugin: "hooks-claude-code", Texts: []string{"hook"}}}
		switch inner {
		case "context":
			d, err := next()
			d.ContextMessages = append(hook, d.ContextMessages...)
			return d, err
		case "block":
			return pipeline.PostDecision{Kind: pipeline.PostBlock, Feedback: []pipeline.Block{pipeline.TextBlock("no")}, ContextMessages: hook}, nil
		}
		return next()
	})
	return r
}

// call runs t with args and returns the summaries of its reminders (and
// other plugins' contexts by plugin name).
func (r *rig) call(name, args string) []string {
	res := r.reg.Execute(pipeline.NewCall("c", name, json.RawMessage(args), r.agent, context.Background()))
	var out []string
	for _, m := range res.ContextMessages {
		if m.Plugin == repeat.Plugin {
			out = append(out, m.Summary)
		} else {
			out = append(out, m.Plugin)
		}
	}
	return out
}

func TestThresholds(t *testing.T) {
	r := newRig(t, "")
	var got []string
	for i := 1; i <= 9; i++ {
		got = append(got, fmt.Sprint(i, r.call("t", `{"a":1,"b":[{"y":2,"x":1}]}`)))
	}
	want := []string{"1 []", "2 []", "3 [t × 3]", "4 []", "5 [t × 5]", "6 []", "7 []", "8 [t × 8]", "9 []"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reminders per call (-want +got):\n%s", diff)
	}
}

// TestKeyIsCanonical: key order does not matter; a different argument, a
// different tool or a reset starts a new run; an unknown tool (denied)
// counts too.
func TestKeyIsCanonical(t *testing.T) {
	r := newRig(t, "")
	r.call("t", `{"b":1,"a":2}`)
	r.call("t", `{"a":2, "b":1}`)
	if got := r.call("t", `{"a":2,"b":1}`); len(got) != 1 {
		t.Errorf("third call with reordered keys: %v, want a reminder", got)
	}
	r.call("t", `{"a":3}`)
	r.call("t", `{"a":3}`)
	r.rem.Reset(r.agent)
	if got := r.call("t", `{"a":3}`); len(got) != 0 {
		t.Errorf("after a reset: %v, want no reminder", got)
	}
	for range 2 {
		r.call("nope", `{}`)
	}
	if got := r.call("nope", `{}`); len(got) != 1 {
		t.Errorf("a denied call's third repeat: %v, want a reminder", got)
	}
	other := &pipeline.Agent{ID: "child"}
	res := r.reg.Execute(pipeline.NewCall("c", "nope", json.RawMessage(`{}`), other, context.Background()))
	if len(res.ContextMessages) != 0 {
		t.Errorf("another agent's first call: %+v", res.ContextMessages)
	}
}

// TestReminderComesFirst: before the inner listener's context, on an
// accepted and on a blocked result.
func TestReminderComesFirst(t *testing.T) {
	for _, inner := range []string{"context", "block"} {
		r := newRig(t, inner)
		r.call("t", `{}`)
		r.call("t", `{}`)
		if got, want := r.call("t", `{}`), []string{"t × 3", "hooks-claude-code"}; !cmp.Equal(got, want) {
			t.Errorf("%s: contexts %v, want %v", inner, got, want)
		}
	}
}

func TestTexts(t *testing.T) {
	r := newRig(t, "")
	long := `{"k":"` + strings.Repeat("x", 600) + `"}`
	var msgs []pipeline.ContextMessage
	for range 5 {
		res := r.reg.Execute(pipeline.NewCall("c", "t", json.RawMessage(long), r.agent, context.Background()))
		msgs = append(msgs, res.ContextMessages...)
	}
	if len(msgs) != 2 || msgs[0].Texts[0] != repeat.Gentle || msgs[0].Form != "notice" {
		t.Fatalf("messages %+v", msgs)
	}
	canonical := `{"k":"` + strings.Repeat("x", 600) + `"}`
	want := repeat.Detailed("t", 5, canonical[:500]+"… (+108 more chars)")
	if msgs[1].Texts[0] != want {
		t.Errorf("detailed reminder:\n%s\nwant\n%s", msgs[1].Texts[0], want)
	}
	if !strings.HasPrefix(want, "Repeated tool call detected:\n- tool: t\n- consecutive_calls: 5\n- arguments: {\"k\":\"xxx") {
		t.Errorf("detailed text %q", want)
	}
}

// TestSameArgumentsOtherToolStartsARun pins the run key's tool name: two
// tools called alternately, or one after the other, with the same
// arguments are separate runs.
func TestSameArgumentsOtherToolStartsARun(t *testing.T) {
	r := newRig(t, "")
	r.call("t", `{"a":1}`)
	r.call("t", `{"a":1}`)
	if got := r.call("nope", `{"a":1}`); len(got) != 0 {
		t.Errorf("another tool's first call with the same arguments: %v, want no reminder", got)
	}
	for i := range 4 {
		if got := r.call([]string{"t", "nope"}[i%2], `{"a":1}`); len(got) != 0 {
			t.Errorf("alternating tools, call %d: %v, want no reminder", i+1, got)
		}
	}
}

// TestPreviewBoundary pins the preview's bound of 500 UTF-16 units: at
// exactly 500 the arguments are quoted whole, at 501 cut with "(+1 more
// chars)"; "é" is one unit and two bytes, so a bound counted in bytes shows.
func TestPreviewBoundary(t *testing.T) {
	for _, tc := range []struct {
		name, canonical, preview string
	}{
		{"500 units", `{"k":"` + strings.Repeat("x", 492) + `"}`, `{"k":"` + strings.Repeat("x", 492) + `"}`},
		{"500 units, 992 bytes", `{"k":"` + strings.Repeat("é", 492) + `"}`, `{"k":"` + strings.Repeat("é", 492) + `"}`},
		{"501 units", `{"k":"` + strings.Repeat("x", 493) + `"}`, `{"k":"` + strings.Repeat("x", 493) + `"… (+1 more chars)`},
	} {
		r := newRig(t, "")
		var last []pipeline.ContextMessage
		for range 5 {
			last = r.reg.Execute(pipeline.NewCall("c", "t", json.RawMessage(tc.canonical), r.agent, context.Background())).ContextMessages
		}
		if want := repeat.Detailed("t", 5, tc.preview); len(last) != 1 || last[0].Texts[0] != want {
			t.Errorf("%s: reminder %+v\nwant %q", tc.name, last, want)
		}
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":{"d":1,"c":[{"z":0,"a":1}]},"a":null}`: `{"a":null,"b":{"c":[{"a":1,"z":0}],"d":1}}`,
		`{"10":1,"2":2,"a":3}`:                       `{"2":2,"10":1,"a":3}`,
		`not json`:                                   `"not json"`,
		``:                                           `""`,
		`[1, 2.50]`:                                  `[1,2.5]`,
	} {
		if got := repeat.Canonical([]byte(in)); got != want {
			t.Errorf("Canonical(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestThresholdValidation(t *testing.T) {
	for _, th := range [][]int{{}, {1, 3}, {3, 3}} {
		if _, err := repeat.New(th); err == nil {
			t.Errorf("thresholds %v accepted", th)
		}
	}
}
