package pipeline

import "testing"

func TestObjectSchemaKeepsUpstreamsKeyOrder(t *testing.T) {
	got := string(ObjectSchema([]Param{
		{Name: "z", Type: "string", Description: "a <b> & c — d"},
		{Name: "a", Type: "string", Description: "mode", Enum: []string{"x", "y"}},
		{Name: "list", Type: "array", Description: "l", Items: &Param{Type: "string", Enum: []string{"p"}}},
		{Name: "bare", Type: "object"},
	}, []string{"z"}))
	want := `{"type":"object","properties":{"z":{"type":"string","description":"a <b> & c — d"},"a":{"type":"string","description":"mode","enum":["x","y"]},` +
		`"list":{"type":"array","description":"l","items":{"type":"string","enum":["p"]}},"bare":{"type":"object"}},"required":["z"]}`
	if got != want {
		t.Errorf("ObjectSchema =\n%s\nwant\n%s", got, want)
	}
	if got := string(ObjectSchema(nil, nil)); got != `{"type":"object","properties":{}}` {
		t.Errorf("schema without required = %s", got)
	}
	if got := string(ObjectSchema(nil, []string{})); got != `{"type":"object","properties":{},"required":[]}` {
		t.Errorf("schema with an empty required = %s", got)
	}
}
