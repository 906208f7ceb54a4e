package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

// TestParseArguments: the model's argument text as upstream's loop reads
// it: empty is {}, JSON is kept as it is (a lossy number included: that is
// the next check's), anything else becomes a JSON string of the text.
func TestParseArguments(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{``, `{}`},
		{`{}`, `{}`},
		{`{"a": -0}`, `{"a": -0}`},
		{`[1]`, `[1]`},
		{`5`, `5`},
		{`null`, `null`},
		{`"s"`, `"s"`},
		{` `, `" "`},
		{`not json`, `"not json"`},
		{`{"file_path": "a.txt"`, `"{\"file_path\": \"a.txt\""`},
		{`{} {}`, `"{} {}"`},
		{`1e999`, `1e999`},
	} {
		if got := string(pipeline.ParseArguments(tc.text)); got != tc.want {
			t.Errorf("ParseArguments(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
}

// TestLossyArgumentsEndBeforeEveryStage: -0 or ±Infinity anywhere in the
// arguments, declared field or not, fails the call with upstream's text (no
// code) before any listener, guard, schema check or body sees it; a string
// is lossless and reaches the schema check.
func TestLossyArgumentsEndBeforeEveryStage(t *testing.T) {
	const lossy = "Error: tool execution arguments must be losslessly JSON-serializable"
	for _, tc := range []struct {
		args, text string
		stages     bool
	}{
		{`{"text":"hi","extra":-0}`, lossy, false},
		{`{"text":"hi","n":{"deep":[1,-0.0]}}`, lossy, false},
		{`{"text":"hi","n":1e999}`, lossy, false},
		{`{"text":"hi","n":-1e999}`, lossy, false},
		{`{"text":"hi","n":-1e-400}`, lossy, false},
		{`{"text":`, lossy, false},
		{``, lossy, false},
		{`{"text":"hi","n":0}`, "hi", true},
		{`"not json"`, `Error: invalid arguments: "arguments" must be an object`, true},
	} {
		st := &state{}
		r := newRegistry(t, st)
		if _, err := r.Register(pipeline.Tool{Name: "checked", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
			Run: echo(st).Run}); err != nil {
			t.Fatal(err)
		}
		addTrace(r, st)
		res := r.Execute(pipeline.NewCall("c1", "checked", json.RawMessage(tc.args), testAgent, context.Background()))
		if res.Text() != tc.text {
			t.Errorf("%s: result %q, want %q", tc.args, res.Text(), tc.text)
		}
		if ran := len(st.trace) > 0; ran != tc.stages {
			t.Errorf("%s: stages ran %v (%v), want %v", tc.args, ran, st.trace, tc.stages)
		}
		if !tc.stages && (res.Error == nil || res.Error.Info != nil || st.bodyRuns != 0 || len(st.postSaw) != 0 || st.results != 1) {
			t.Errorf("%s: result %+v body %d post %d results %d", tc.args, res.Error, st.bodyRuns, len(st.postSaw), st.results)
		}
	}
}
