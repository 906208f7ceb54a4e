package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/served"
	"github.com/dshsim/dshsim/tools/subagent"
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
	byID := servedByID(servedSource(rec))
	outer, err := byID("advanced-code")
	if err != nil {
		t.Fatalf("no outer run_code result: %v", err)
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
		r, err := byID(id)
		if err != nil || r.Name != want.name || r.IsError || !strings.HasPrefix(r.Content[0].Text, want.text) {
			t.Fatalf("%s: %v %+v", id, err, r)
		}
		if r.Value == nil || string(r.Value) != compact(want.value) {
			t.Errorf("%s: value %s (%s)\nwant %s", id, r.Value, r.ValueNote, compact(want.value))
		}
		if !strings.Contains(string(r.Arguments), `"pluginId":"snap-1"`) {
			t.Errorf("%s: arguments %s", id, r.Arguments)
		}
	}
	if r, err := byID("advanced-define"); err != nil || string(r.Meta) != `{"pluginId":"snap-1","packageId":"pkg-1"}` || r.Value != nil {
		t.Errorf("model's call: %v %+v", err, r)
	}
}

// servedByID looks a call id up in src as a call of no session whose tool
// and arguments match nothing: the record of that id comes back for the
// served body to compare.
func servedByID(src served.Source) func(id string) (served.Recorded, error) {
	return func(id string) (served.Recorded, error) {
		return src(pipeline.NewCall(id, "", json.RawMessage(`{}`), nil, context.Background()))
	}
}

// TestPickServed: call ids repeat across sessions; the calling session's
// own record answers first, else the one matching record in any log
// (equal copies, as a fork's prefix holds, count once); differing matches
// are not guessed between; a record of another tool or other arguments is
// returned only for the served body to name the difference, the calling
// session's own first. Planted bugs caught: the own record winning over a
// match elsewhere although its arguments differ; the fallback naming another
// session's record.
func TestPickServed(t *testing.T) {
	rec := func(name, args, text string) served.Recorded {
		return served.Recorded{Name: name, Arguments: json.RawMessage(args), Content: []pipeline.Block{pipeline.TextBlock(text)}}
	}
	root := servedLog{"root-id", map[string]served.Recorded{
		"c1": rec("web_fetch", `{"url":"a"}`, "root's A"),
		"c2": rec("web_fetch", `{"url":"b"}`, "root's B"),
		"c4": rec("web_fetch", `{"url":"d"}`, "D"),
		"c5": rec("web_fetch", `{"url":"e"}`, "root's E"),
		"c7": rec("web_fetch", `{"url":"g"}`, "root's G"),
	}}
	child := servedLog{"child-id", map[string]served.Recorded{
		"c1": rec("web_fetch", `{"url":"a"}`, "child's A"),
		"c3": rec("web_fetch", `{"url":"c"}`, "child's C"),
		"c4": rec("web_fetch", `{"url":"d"}`, "D"),
		"c5": rec("web_fetch", `{"url":"e"}`, "child's E"),
		"c6": {Name: "web_fetch", Arguments: json.RawMessage(`{"url":"f"}`)}, // called, no result
		"c7": rec("web_fetch", `{"url":"h"}`, "child's H"),
	}}
	other := servedLog{"other-id", map[string]served.Recorded{
		"c5": rec("web_fetch", `{"url":"e"}`, "other's E"),
	}}
	logs := []servedLog{root, child, other}
	cases := []struct{ session, id, args, want, err string }{
		{"child-id", "c1", `{"url":"a"}`, "child's A", ""},
		{"root-live", "c1", `{"url":"a"}`, "root's A", ""}, // a session bound to no child is the root
		{"child-id", "c2", `{"url":"b"}`, "root's B", ""},  // the one match anywhere
		{"root-live", "c3", `{"url":"c"}`, "child's C", ""},
		{"other-id", "c4", `{"url":"d"}`, "D", ""}, // equal copies count once
		{"root-live", "c5", `{"url":"e"}`, "root's E", ""},
		{"unbound", "c5", `{"url":"e"}`, "root's E", ""},
		{"other-id", "c5", `{"url":"e"}`, "other's E", ""},
		{"child-id", "c1", `{"url":"z"}`, "child's A", ""},      // other arguments: its own record, for the body to refuse
		{"child-id", "c2", `{"url":"z"}`, "root's B", ""},       // other arguments, none of its own: another log's
		{"child-id", "c7", `{"url":"g"}`, "root's G", ""},       // its own record has other arguments: the one match elsewhere wins
		{"child-id", "c7", `{"tool":"other"}`, "child's H", ""}, // no match anywhere: its own record, not the root's
		{"root-live", "c1", `{"url":"z"}`, "root's A", ""},      // no match anywhere: the root's own, not the child's
		{"child-id", "c5", `{"url":"z"}`, "child's E", ""},      // no match anywhere: its own, not the logs' before or after it
		{"child-id", "c6", `{"url":"f"}`, "", "the recording has no result for call c6"},
		{"child-id", "c9", `{}`, "", "the recording has no result for call c9"},
	}
	for _, c := range cases {
		r, err := pickServed(logs, c.session, pipeline.NewCall(c.id, "web_fetch", json.RawMessage(c.args), nil, context.Background()))
		got := ""
		if err == nil {
			got = r.Content[0].Text
		}
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("%s %s %s: %q %v, want %q %q", c.session, c.id, c.args, got, err, c.want, c.err)
		}
	}
	ambiguous := []servedLog{{"x", map[string]served.Recorded{"c2": rec("web_fetch", `{}`, "one")}}, {"y", map[string]served.Recorded{"c1": rec("web_fetch", `{}`, "two")}}, {"z", map[string]served.Recorded{"c1": rec("web_fetch", `{}`, "three")}}}
	if _, err := pickServed(ambiguous, "none", pipeline.NewCall("c1", "web_fetch", json.RawMessage(`{}`), nil, context.Background())); err == nil || err.Error() != "the recording's sessions hold 2 different results for call c1, none in the calling session" {
		t.Errorf("differing results in other sessions: %v", err)
	}
}

// TestAChildsToolComposesItsArea: a tool that only a child's model calls
// (web_fetch here) composes its area as one the root calls does, with the
// note that the profile lacks it.
func TestAChildsToolComposesItsArea(t *testing.T) {
	script := func(names ...string) *recording.Script {
		var calls []recording.ToolCall
		for _, n := range names {
			calls = append(calls, recording.ToolCall{Name: n})
		}
		return &recording.Script{Replies: []recording.Reply{{ToolCalls: calls}}}
	}
	for _, c := range []struct {
		name     string
		children []*recording.Child
		web      bool
	}{
		{"no child calls it", []*recording.Child{{Index: 1, Script: script("read")}}, false},
		{"a child calls it", []*recording.Child{{Index: 1, Script: script("read")}, {Index: 2, Script: script("web_fetch")}}, true},
	} {
		p := &prepared{rec: &recording.Recording{Children: c.children}, script: script("bash")}
		var cfg stack.Config
		notes := p.profileConfig(&cfg, t.TempDir())
		if cfg.WebFetch != c.web || (len(notes) > 0) != c.web {
			t.Errorf("%s: web_fetch composed %v, notes %q", c.name, cfg.WebFetch, notes)
		}
	}
}

// subagentTools sets the delegation tools' knobs by name; the others keep
// the default composition's.
func TestSubagentToolsKnobs(t *testing.T) {
	off := false
	rec := &recording.Recording{SettingsSource: recording.SettingsSource{
		Settings: recording.Settings{DelegationKnobs: recording.DelegationKnobs{
			SubagentTools: map[string]recording.SubagentTool{
				"subagent": {BackgroundMode: recording.BackgroundOneShot, EnableRunInBackground: &off},
			},
		},
		},
	},
	}
	got := map[string]subagent.Instance{}
	for _, in := range newEmulation("", t.TempDir()).subagentConfig(rec).Instances {
		got[in.Name] = in
	}
	if s := got["subagent"]; s.Background != subagent.OneShot || !s.NoBackground {
		t.Errorf("subagent: %+v, want one-shot without run_in_background", s)
	}
	if f := got["subagent_fork"]; f.Background != subagent.OneShot || !f.NoBackground {
		t.Errorf("subagent_fork: %+v, want the default (one-shot, waits)", f)
	}
	def := map[string]subagent.Instance{}
	for _, in := range newEmulation("", t.TempDir()).subagentConfig(&recording.Recording{}).Instances {
		def[in.Name] = in
	}
	if s := def["subagent"]; s.Background != subagent.Continuable || s.NoBackground {
		t.Errorf("default subagent: %+v, want continuable with run_in_background", s)
	}
}
