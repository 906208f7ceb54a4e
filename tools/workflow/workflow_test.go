package workflow_test

import (
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/workflow"
)

// TestValidateMeta: upstream's meta checks, every violation named and
// joined by "; " in one META_INVALID error (the oracle recording
// workflow-oracle-parallel pins the unknown-field text). Planted bugs
// caught: an unknown field accepted, a phase without a title accepted, the
// violations reported one at a time.
func TestValidateMeta(t *testing.T) {
	for _, tc := range []struct {
		meta, name, err string
	}{
		{`{"name":"survey","description":"look around"}`, "survey", ""},
		{`{"name":"survey","description":"d","whenToUse":"w","phases":[{"title":"scan","detail":"x"}]}`, "survey", ""},
		{`{"name":"survey","description":"d","extra":1}`, "", "invalid meta: meta.extra is not a recognized field (name/description/whenToUse/phases)"},
		{`{"description":""}`, "", "invalid meta: meta.name must be a non-empty string; meta.description must be a non-empty string"},
		{`[]`, "", "invalid meta: meta must be an object"},
		{`{"name":"n","description":"d","whenToUse":3}`, "", "invalid meta: meta.whenToUse must be a string"},
		{`{"name":"n","description":"d","phases":{}}`, "", "invalid meta: meta.phases must be an array"},
		{`{"name":"n","description":"d","phases":[1,{"title":"","model":2,"color":"red"}]}`, "",
			"invalid meta: meta.phases[0] must be an object; meta.phases[1].color is not a recognized field; meta.phases[1].title must be a non-empty string; meta.phases[1].model must be a string"},
	} {
		name, err := workflow.ValidateMeta(json.RawMessage(tc.meta))
		got := ""
		if err != nil {
			got = pipeline.ErrorMessage(err)
			if _, code, _ := pipeline.CodeOf(err); code != "META_INVALID" {
				t.Errorf("%s: code %q", tc.meta, code)
			}
		}
		if name != tc.name || got != tc.err {
			t.Errorf("ValidateMeta(%s) = %q, %q\nwant %q, %q", tc.meta, name, got, tc.name, tc.err)
		}
	}
}
