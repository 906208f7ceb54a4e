package skill

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// seed writes the recorded skill-load workspace's three skills.
func seed(t *testing.T, ws string) {
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/snapshot-skill/SKILL.md"), "---\nname: snapshot-skill\ndescription: Exercise project skill discovery and loading in snapshot tests.\n---\n\nFollow these snapshot-only instructions.\nResolve referenced resources relative to this skill directory.\n")
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/model-only-skill/SKILL.md"), "---\nname: model-only-skill\ndescription: Prove user-disabled skills remain available to the model.\nuser-invocable: false\n---\n\nFollow these model-only snapshot instructions.\n")
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/user-only-skill/SKILL.md"), "---\nname: user-only-skill\ndescription: Prove model-disabled skills stay outside the model catalog.\ndisable-model-invocation: true\n---\n\nFollow these user-only snapshot instructions.\n")
}

func TestCatalogAsRecorded(t *testing.T) {
	ws := t.TempDir()
	seed(t, ws)
	cfg := Config{DshHome: filepath.Join(ws, ".dsh")}
	text, src, ok := cfg.NextCatalog(ws, Published{})
	if !ok {
		t.Fatal("no catalog")
	}
	want := "<system-reminder>\nA skill is a reusable set of task-specific instructions. The following skills are available in this session:\n\n<available_skills>\n- `model-only-skill`: Prove user-disabled skills remain available to the model.\n- `snapshot-skill`: Exercise project skill discovery and loading in snapshot tests.\n</available_skills>\n\nIf the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.\nA user may also invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool again for that skill.\n</system-reminder>"
	if text != want {
		t.Fatalf("text\n%s\nwant\n%s", text, want)
	}
	b, _ := json.Marshal(src)
	if string(b) != `{"kind":"skill-catalog","form":"catalog","entries":[{"name":"model-only-skill","description":"Prove user-disabled skills remain available to the model."},{"name":"snapshot-skill","description":"Exercise project skill discovery and loading in snapshot tests."}]}` {
		t.Fatalf("source %s", b)
	}
	// The same entries published: nothing new. A change: an update.
	if _, _, again := cfg.NextCatalog(ws, Published{Any: true, Digest: Digest(src.Entries)}); again {
		t.Fatal("republished an unchanged catalog")
	}
	os.RemoveAll(filepath.Join(ws, ".dsh/skills/snapshot-skill"))
	upd, usrc, ok := cfg.NextCatalog(ws, Published{Any: true, Digest: Digest(src.Entries)})
	if !ok || !usrc.Update || !strings.HasPrefix(upd, "<system-reminder>\nThe available skill catalog changed.") || strings.Contains(upd, "snapshot-skill") {
		t.Fatalf("update %v %+v\n%s", ok, usrc, upd)
	}
	// Nothing ever published and nothing to list: no message.
	if _, _, ok := (Config{}).NextCatalog(t.TempDir(), Published{}); ok {
		t.Fatal("an empty first catalog was published")
	}
}

func TestDiscoveryRules(t *testing.T) {
	ws := t.TempDir()
	home := filepath.Join(t.TempDir(), "home")
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/dup/SKILL.md"), "---\nname: dup\ndescription: project wins\n---\nP")
	harness.MustWrite(t, filepath.Join(home, "skills/dup/SKILL.md"), "---\nname: dup\ndescription: user loses\n---\nU")
	harness.MustWrite(t, filepath.Join(ws, ".agents/skills/flat.md"), "---\nname: flat\ndescription:   many\n   spaces\there \n---\nF")
	harness.MustWrite(t, filepath.Join(home, "skills/.system/SKILL.md"), "---\nname: system\ndescription: skipped\n---\n")
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/noname/SKILL.md"), "---\ndescription: x\n---\n")
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/bad-name/SKILL.md"), "---\nname: Bad_Name\ndescription: x\n---\n")
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/nofront/SKILL.md"), "no front matter")
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/legacy/SKILL.md"), "---\nname: legacy\ndescription: x\nuserInvocable: false\n---\n")
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/badbool/SKILL.md"), "---\nname: badbool\ndescription: x\nuser-invocable: maybe\n---\n")
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/yes/SKILL.md"), "---\nname: yes\ndescription: x\ndisable-model-invocation: yes\n---\n")
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/binary/SKILL.md"), "---\nname: binary\ndescription: x\n---\n\x00")
	got := Discover(Roots(ws, home, ""), warn)
	var names []string
	for _, s := range got {
		names = append(names, s.Name+"@"+s.Source)
	}
	if strings.Join(names, " ") != "dup@project-dsh flat@project-agents yes@project-dsh" {
		t.Fatalf("skills %v (warnings %q)", names, warned)
	}
	entries := Entries(got, CatalogDescriptionMaxLength)
	if len(entries) != 2 || entries[1].Description != "many spaces here" {
		t.Fatalf("entries %+v", entries)
	}
	long := Entries([]Skill{{Name: "a", Description: strings.Repeat("x", 600), ModelInvocable: true}}, 500)
	if len(long[0].Description) != 500 || !strings.HasSuffix(long[0].Description, "x...") {
		t.Fatalf("cut %d", len(long[0].Description))
	}
	if len(warned) < 6 {
		t.Fatalf("warnings %q", warned)
	}
}

func TestSkillTool(t *testing.T) {
	ws := t.TempDir()
	seed(t, ws)
	harness.MustWrite(t, filepath.Join(ws, ".dsh/skills/amp/SKILL.md"), "---\nname: amp\ndescription: x\n---\n\n  body <b> & more  \n\n")
	regs, _ := New(Config{DshHome: filepath.Join(ws, ".dsh")})
	reg := pipelinetest.Registry(t, toolreg.Defs(regs...)...)
	agent := &pipeline.Agent{ID: "root", Session: sessiontest.New(t, "s1", ws)}
	call := func(args string) pipeline.Result {
		return reg.Execute(pipeline.NewCall("c1", Name, json.RawMessage(args), agent, context.Background()))
	}
	for args, want := range map[string]string{
		`{"name":"Bad"}`:             `Error: invalid skill name "Bad"`,
		`{"name":"absent"}`:          `Error: skill "absent" is unknown or no longer available`,
		`{"name":"user-only-skill"}`: `Error: skill "user-only-skill" is not available for model invocation`,
	} {
		if r := call(args); !r.IsError || r.Text() != want {
			t.Errorf("%s: %+v", args, r)
		}
	}
	r := call(`{"name":"amp"}`)
	want := "<skill_content name=\"amp\">\n<skill_resources>\nBase directory for this skill: " + filepath.Join(ws, ".dsh/skills/amp") +
		"\nResolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\nbody <b> & more\n</skill_instructions>\n</skill_content>"
	if r.IsError || r.Text() != want {
		t.Fatalf("got\n%s\nwant\n%s", r.Text(), want)
	}
	if got := Render(`a"<&`, "/x<y>&", "b"); !strings.HasPrefix(got, `<skill_content name="a&quot;&lt;&amp;">`) || !strings.Contains(got, "directory for this skill: /x&lt;y&gt;&amp;\n") {
		t.Fatalf("escaping %q", got)
	}
}

// TestPublishedIn: the latest user message whose source is a skill
// catalog is what was published; other user messages and other events
// are not.
func TestPublishedIn(t *testing.T) {
	msg := func(kind string, entries []Entry) session.Event {
		data, _ := json.Marshal(map[string]any{"source": map[string]any{"kind": kind, "entries": entries}})
		return session.Event{Type: session.KindUserMessage, Data: data}
	}
	a, b := []Entry{{Name: "a", Description: "A"}}, []Entry{{Name: "b", Description: "B"}}
	tests := []struct {
		name string
		evs  []session.Event
		want Published
	}{
		{"none", nil, Published{}},
		{"a prompt only", []session.Event{msg("user", nil)}, Published{}},
		{"a catalog", []session.Event{msg("skill-catalog", a)}, Published{Any: true, Digest: Digest(a)}},
		{"the latest wins", []session.Event{msg("skill-catalog", a), msg("user", nil), msg("skill-catalog", b)}, Published{Any: true, Digest: Digest(b)}},
		{"another event with the source", []session.Event{{Type: session.KindAssistantMessage, Data: msg("skill-catalog", a).Data}}, Published{}},
	}
	for _, tc := range tests {
		if got := PublishedIn(tc.evs); got != tc.want {
			t.Errorf("%s: PublishedIn = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
