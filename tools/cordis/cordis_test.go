package cordis

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
)

func TestUnservedBodyRefuses(t *testing.T) {
	reg := pipelinetest.Registry(t, InspectQuery())
	r := reg.Execute(pipeline.NewCall("c", InspectQueryName, json.RawMessage(`{"platform":"host","provider":"Service","method":"listService","input":{"service":"tools"}}`), nil, context.Background()))
	if !r.IsError || r.Text() != "Error: "+ErrNoCatalog.Error() {
		t.Fatalf("%+v", r)
	}
	if r := reg.Execute(pipeline.NewCall("c", InspectQueryName, json.RawMessage(`{"platform":"mars","provider":"x","method":"y"}`), nil, context.Background())); !r.IsError || r.Text() == "Error: "+ErrNoCatalog.Error() {
		t.Fatalf("schema not checked: %+v", r)
	}
}
