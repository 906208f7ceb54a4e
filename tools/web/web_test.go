package web

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/tools/toolreg"
)

func TestUnservedFetch(t *testing.T) {
	regs, _ := New(Config{})
	reg := pipelinetest.Registry(t, toolreg.Defs(regs...)...)
	for args, want := range map[string]string{
		`{"url":" "}`: "Error: url must be a non-empty string",
		`{"url":"http://127.0.0.1:43117/menu.html"}`: "Error: " + ErrNoFetcher.Error(),
		`{}`: `Error: invalid arguments: missing required property "url"`,
	} {
		if r := reg.Execute(pipeline.NewCall("c", FetchName, json.RawMessage(args), nil, context.Background())); !r.IsError || r.Text() != want {
			t.Errorf("%s: %q", args, r.Text())
		}
	}
}
