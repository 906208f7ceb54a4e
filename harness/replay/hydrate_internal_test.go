package replay

import (
	"reflect"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/stack"
)

// TestHydrate: a JSON-RPC recording's replies and prompt name the run's
// cwd where the fixture holds the cwd token (upstream's suite hydrates the
// fixture before the run); other front ends' are played as recorded, and
// the script itself is never changed.
func TestHydrate(t *testing.T) {
	for _, c := range []struct {
		fe   recording.Frontend
		want bool
	}{{recording.JSONRPC, true}, {recording.Headless, false}, {recording.ACP, false}, {recording.PythonSDK, false}} {
		if got := hydrates(&recording.Recording{Frontend: c.fe}); got != c.want {
			t.Errorf("hydrates(%s) = %v, want %v", c.fe, got, c.want)
		}
	}
	args := `{"command":"view","path":"{{cwd}}/note.txt"}`
	orig := recording.Reply{
		Blocks:    []recording.Block{{Type: "text", Text: "in {{cwd}} and {{cwd}}"}, {Type: "tool-call", ID: "c", Name: "str_replace_editor", Arguments: args}},
		ToolCalls: []recording.ToolCall{{ID: "c", Name: "str_replace_editor", Arguments: args}},
		Chunks: []map[string]any{
			{"type": "text-delta", "text": "in {{cwd}}"},
			{"type": "block-end", "block": map[string]any{"arguments": args, "list": []any{"{{cwd}}", 1.0}}},
		},
	}
	keep := recording.Reply{Blocks: append([]recording.Block(nil), orig.Blocks...), ToolCalls: append([]recording.ToolCall(nil), orig.ToolCalls...),
		Chunks: []map[string]any{{"type": "text-delta", "text": "in {{cwd}}"}, {"type": "block-end", "block": map[string]any{"arguments": args, "list": []any{"{{cwd}}", 1.0}}}}}
	got := hydrateReply(orig, "/ws")
	wantArgs := `{"command":"view","path":"/ws/note.txt"}`
	want := recording.Reply{
		Blocks:    []recording.Block{{Type: "text", Text: "in /ws and /ws"}, {Type: "tool-call", ID: "c", Name: "str_replace_editor", Arguments: wantArgs}},
		ToolCalls: []recording.ToolCall{{ID: "c", Name: "str_replace_editor", Arguments: wantArgs}},
		Chunks: []map[string]any{
			{"type": "text-delta", "text": "in /ws"},
			{"type": "block-end", "block": map[string]any{"arguments": wantArgs, "list": []any{"/ws", 1.0}}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hydrated\n%+v\nwant\n%+v", got, want)
	}
	if !reflect.DeepEqual(orig, keep) {
		t.Errorf("the script changed: %+v", orig)
	}
}

// TestMinimalProfile: the minimal overlay composes the persistent bash
// (with the overlay's description) and str_replace_editor alone, without
// the one-shot bash, the job and file tools, the sandbox policy, the
// default profile's extras or delegation.
func TestMinimalProfile(t *testing.T) {
	rec := &recording.Recording{Frontend: recording.JSONRPC, SettingsSource: recording.SettingsSource{Settings: recording.Settings{Profile: recording.ProfileMinimal}}}
	p := &prepared{rec: rec, script: &recording.Script{}}
	var cfg stack.Config
	p.profileConfig(&cfg, t.TempDir())
	switch {
	case cfg.PersistentShell == nil || cfg.PersistentShell.Description != minimalBashDescription || cfg.PersistentShell.TimeoutMs != 300000:
		t.Errorf("persistent shell: %+v", cfg.PersistentShell)
	case cfg.Editor == nil || cfg.Editor.MaxOutputChars != 16000:
		t.Errorf("editor: %+v", cfg.Editor)
	case cfg.Without != stack.Without{Bash: true, JobTools: true, FileTools: true, Policy: true}:
		t.Errorf("without: %+v", cfg.Without)
	case cfg.Todo || cfg.Skills != nil:
		t.Errorf("the default profile's extras: todo %v, skills %v", cfg.Todo, cfg.Skills)
	case delegates(rec, ""):
		t.Error("the minimal overlay delegates")
	case !standalone(recording.ProfileMinimal):
		t.Error("the minimal overlay is not standalone")
	}
	if other := (&recording.Recording{Frontend: recording.JSONRPC}); !delegates(other, "") {
		t.Error("the default JSON-RPC composition does not delegate")
	}
}
