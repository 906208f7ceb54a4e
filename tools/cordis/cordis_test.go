package cordis

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

func TestUnservedBodyRefuses(t *testing.T) {
	reg := pipeline.NewRegistry()
	if _, err := reg.Register(InspectQuery()); err != nil {
		t.Fatal(err)
	}
	r := reg.Execute(pipeline.NewCall("c", InspectQueryName, json.RawMessage(`{"platform":"host","provider":"Service","method":"listService","input":{"service":"tools"}}`), nil, context.Background()))
	if !r.IsError || r.Text() != "Error: "+ErrNoCatalog.Error() {
		t.Fatalf("%+v", r)
	}
	if r := reg.Execute(pipeline.NewCall("c", InspectQueryName, json.RawMessage(`{"platform":"mars","provider":"x","method":"y"}`), nil, context.Background())); !r.IsError || r.Text() == "Error: "+ErrNoCatalog.Error() {
		t.Fatalf("schema not checked: %+v", r)
	}
}
