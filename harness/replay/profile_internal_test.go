package replay

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestServedSourceOfNestedCalls: advanced-toolchain's run_code program
// called cordis_run and cordis_inspect_self; the source answers each
// nested call from its tool/code-dispatch with the value the program got,
// which is what the program returned under run and inspected (cordis_run's
// rendering is one line, so only the outer result pins its value), and a
// model's call from its tool/call and tool/result with the meta.
func TestServedSourceOfNestedCalls(t *testing.T) {
	rec, err := recording.Load(filepath.Join("..", "..", "transcripts", "advanced-toolchain"))
	if err != nil {
		t.Fatal(err)
	}
	src := servedSource(rec)
	outer, ok := src("advanced-code")
	if !ok {
		t.Fatal("no outer run_code result")
	}
	var returned struct{ Run, Inspected json.RawMessage }
	if err := json.Unmarshal([]byte(outer.Content[0].Text), &returned); err != nil {
		t.Fatal(err)
	}
	compact := func(raw json.RawMessage) string {
		var b bytes.Buffer
		json.Compact(&b, raw)
		return b.String()
	}
	for id, want := range map[string]struct {
		name, text string
		value      json.RawMessage
	}{
		"advanced-code:code:1": {"cordis_run", "snap-1/pkg-1 is running (run-1).", returned.Run},
		"advanced-code:code:2": {"cordis_inspect_self", "{\n  \"mode\": \"plugin\",", returned.Inspected},
	} {
		r, ok := src(id)
		if !ok || r.Name != want.name || r.IsError || !strings.HasPrefix(r.Content[0].Text, want.text) {
			t.Fatalf("%s: %v %+v", id, ok, r)
		}
		if r.Value == nil || string(r.Value) != compact(want.value) {
			t.Errorf("%s: value %s (%s)\nwant %s", id, r.Value, r.ValueNote, compact(want.value))
		}
		if !strings.Contains(string(r.Arguments), `"pluginId":"snap-1"`) {
			t.Errorf("%s: arguments %s", id, r.Arguments)
		}
	}
	if r, ok := src("advanced-define"); !ok || string(r.Meta) != `{"pluginId":"snap-1","packageId":"pkg-1"}` || r.Value != nil {
		t.Errorf("model's call: %v %+v", ok, r)
	}
}
