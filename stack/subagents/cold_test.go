package subagents_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/stack/subagents"
	"github.com/dshsim/dshsim/tools/subagent"
)

// coldLog writes a child log under dir: its header and, when d is not nil,
// a subagent/descriptor event of d (a raw JSON value).
func coldLog(t *testing.T, dir string, h session.Header, d any) string {
	t.Helper()
	path := filepath.Join(dir, h.ID+".jsonl")
	log, err := session.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if d != nil {
		if _, err := log.Append(session.KindSubagentDescriptor, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := log.Append(session.KindTurnStart, map[string]int{"turn": 1}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAdopt: a persisted child of the caller is listed as its descriptor
// folds (a continuable one ready, a one-shot one left out of the text); one
// classified a subagent without a readable descriptor is a diagnostic row,
// "<id> [diagnostic: corrupt]", never dropped; a log that is not a child's,
// or a child already known, is refused naming the file.
func TestAdopt(t *testing.T) {
	dir := t.TempDir()
	rt, err := subagents.New(nil, "", &subagents.Config{Loops: loops{}, SessionsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	child := func(id, parent, origin string) session.Header {
		return session.Header{ID: id, Cwd: dir, ParentSession: parent, Origin: origin, DelegationDepth: 1}
	}
	for _, tc := range []struct {
		name string
		h    session.Header
		d    any
		want string // "" adopted; else the error's text after the path
	}{
		{"no descriptor", child("corrupt-child", "parent", "subagent"), nil, ""},
		{"an unknown mode", child("odd-mode", "parent", "subagent"), delegation.Descriptor{Version: 1, Mode: "sideways", Provider: "spawn"}, ""},
		{"an undecodable descriptor", child("bad-descriptor", "parent", "subagent"), json.RawMessage(`"text"`), ""},
		{"continuable", child("live-child", "parent", "subagent"), delegation.Descriptor{Version: 1, Mode: delegation.ModeContinuable, Provider: "spawn", Label: "probe"}, ""},
		{"one-shot", child("job-child", "parent", "subagent"), delegation.Descriptor{Version: 1, Mode: delegation.ModeOneShot, Provider: "spawn"}, ""},
		{"another parent's", child("foreign-child", "other", "subagent"), nil, ""},
		{"no origin", child("no-origin", "parent", ""), nil, `not a child session (parentSession "parent", origin ""; want a parent and origin "subagent")`},
		{"no parent", child("no-parent", "", "subagent"), nil, `not a child session (parentSession "", origin "subagent"; want a parent and origin "subagent")`},
	} {
		path := coldLog(t, t.TempDir(), tc.h, tc.d)
		err := rt.Adopt(path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != path+": "+tc.want):
			t.Errorf("%s: %v, want %q", tc.name, err, path+": "+tc.want)
		}
	}
	again := coldLog(t, t.TempDir(), child("live-child", "parent", "subagent"), nil)
	if err := rt.Adopt(again); err == nil || !strings.HasSuffix(err.Error(), `child session "live-child" is already known`) {
		t.Errorf("a known child adopted again: %v", err)
	}
	caller := &pipeline.Agent{ID: "root", Session: sessiontest.New(t, "parent", dir)}
	entries, err := rt.List(t.Context(), caller, false)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := subagent.RenderList(entries, false)
	want := "corrupt-child [diagnostic: corrupt]\nodd-mode [diagnostic: corrupt]\nbad-descriptor [diagnostic: corrupt]\nlive-child [ready] — probe"
	if text != want {
		t.Errorf("list_agents:\n%s\nwant:\n%s", text, want)
	}
	if len(entries) != 5 {
		t.Errorf("%d entries, want 5 (the one-shot child is listed, not rendered; another parent's is not listed)", len(entries))
	}
}
