package stack_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/served"
)

// cordisTools are the cordis tools in upstream's registration order.
const cordisTools = "cordis_inspect_list,cordis_inspect_query,cordis_inspect_self,cordis_define,cordis_run,cordis_stop,cordis_undefine"

// TestExtrasComposition: each area beyond the safety stack is composed only
// when configured, in the composition's order, and the standalone omissions; the
// cordis tools are all served whenever a recording is given (their Cordis
// host never runs here).
func TestExtrasComposition(t *testing.T) {
	src := func(c *pipeline.Call) (served.Recorded, error) { return served.Recorded{}, served.NoResult(c.CallID()) }
	for _, tc := range []struct {
		name   string
		cfg    stack.Config
		tools  string
		served string
	}{
		{"default profile extras", stack.Config{ExtraTools: stack.ExtraTools{Todo: true, Skills: &stack.SkillsConfig{}}},
			"bash,job_output,job_kill,job_list,read,write,edit,todo_write,skill", ""},
		{"images", stack.Config{ExtraTools: stack.ExtraTools{Images: &stack.ImagesConfig{DshHome: "/nonexistent-dsh-home"}}},
			"bash,job_output,job_kill,job_list,read,write,edit,read_image", ""},
		{"fs-search overlay", stack.Config{ExtraTools: stack.ExtraTools{FileSearch: &stack.FileSearchConfig{}}, Without: stack.Without{FileTools: true, JobTools: true, Policy: true}},
			"bash,glob,grep", ""},
		{"pwsh overlay", stack.Config{ExtraTools: stack.ExtraTools{ShellTools: stack.ShellTools{Pwsh: &stack.PwshConfig{}}, Served: &stack.ServedConfig{Source: src}}, Without: stack.Without{Bash: true, FileTools: true, Policy: true}},
			"job_output,job_kill,job_list,pwsh", "pwsh"},
		{"web_fetch served", stack.Config{ExtraTools: stack.ExtraTools{WebFetch: true, Served: &stack.ServedConfig{Tools: []string{"web_fetch"}, Source: src}}},
			"bash,job_output,job_kill,job_list,read,write,edit,web_fetch", "web_fetch"},
		{"served cordis", stack.Config{ExtraTools: stack.ExtraTools{Cordis: true, ShellTools: stack.ShellTools{Terminal: &stack.TerminalConfig{}}, Served: &stack.ServedConfig{Tools: []string{"cordis_inspect_query"}, Source: src}}},
			"bash,job_output,job_kill,job_list,read,write,edit,terminal_open,terminal_send,terminal_read,terminal_signal,terminal_close,terminal_list," + cordisTools, cordisTools},
		{"cordis without a recording", stack.Config{ExtraTools: stack.ExtraTools{Cordis: true}}, "bash,job_output,job_kill,job_list,read,write,edit," + cordisTools, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newComposed(t, tc.cfg)
			if got := strings.Join(s.Tools(), ","); got != tc.tools {
				t.Fatalf("tools %s\nwant  %s", got, tc.tools)
			}
			if got := strings.Join(s.Served(), ","); got != tc.served && !(tc.name == "pwsh overlay" && got == "") {
				t.Fatalf("served %q, want %q", got, tc.served)
			}
		})
	}
}

// TestServedNeverStandsInForTheSafetyStack: the composition's tools of the
// safety stack are bash, read, write, edit, run_code and the job tools (the
// replay's settings refuse the same), and New refuses to serve any of them,
// a left-out one (Config.Without) too.
func TestServedNeverStandsInForTheSafetyStack(t *testing.T) {
	got := newComposed(t, stack.Config{ToolOptions: stack.ToolOptions{ToolsMode: stack.ToolsBoth}}).SafetyStack()
	if want := "bash,job_output,job_kill,job_list,run_code,read,write,edit"; strings.Join(got, ",") != want {
		t.Fatalf("safety stack %v, want %s", got, want)
	}
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(recording.SafetyStackTools))) {
		t.Errorf("the replay's settings refuse %v, the stack's safety stack is %v", recording.SafetyStackTools, got)
	}
	for _, name := range got {
		ws := t.TempDir()
		_, err := stack.New(stack.Config{Workspace: ws, Log: sessiontest.New(t, "s", ws), Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever, ToolOptions: stack.ToolOptions{
			ToolsMode: stack.ToolsBoth,
		},
			Without: stack.Without{Bash: true, FileTools: true, JobTools: true, Policy: true},
			ExtraTools: stack.ExtraTools{
				Served: &stack.ServedConfig{Tools: []string{name}, Source: func(*pipeline.Call) (served.Recorded, error) { return served.Recorded{}, nil }},
			},
		})
		if !errors.Is(err, served.ErrSafetyStack) || err.Error() != "stack: served "+name+": "+served.ErrSafetyStack.Error() {
			t.Errorf("served %s: %v", name, err)
		}
	}
}

func TestStandaloneNeedsDangerFullAccess(t *testing.T) {
	ws := t.TempDir()
	_, err := stack.New(stack.Config{Workspace: ws, Log: sessiontest.New(t, "s", ws), Mode: sandbox.WorkspaceWrite, Approval: stack.ApprovalNever, Without: stack.Without{Policy: true}})
	if err == nil || !strings.Contains(err.Error(), "must be danger-full-access") {
		t.Fatalf("%v", err)
	}
	s := newComposed(t, stack.Config{Without: stack.Without{Policy: true}})
	if ev, err := s.SyncContext(context.Background()); ev != nil || err != nil {
		t.Fatalf("a standalone stack entered a runtime context: %v %v", ev, err)
	}
	if m, err := s.PendingContext(context.Background()); m != nil || err != nil {
		t.Fatalf("a standalone stack has a runtime context pending: %v %v", m, err)
	}
	var bash pipeline.Tool
	for _, d := range s.Definitions() {
		if d.Name == "bash" {
			bash = d
		}
	}
	if strings.Contains(string(bash.Parameters), "sandbox_permissions") {
		t.Fatal("unconfined bash advertises escalation")
	}
}

// TestSkillCatalogIsEnteredOnceUntilItChanges: SyncCatalog appends the
// catalog message, then nothing until the skills change.
func TestSkillCatalogIsEnteredOnceUntilItChanges(t *testing.T) {
	s, ws, log := composed(t, stack.Config{Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever, ExtraTools: stack.ExtraTools{Skills: &stack.SkillsConfig{}}})
	put := func(rel, content string) {
		p := filepath.Join(ws, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	if ev, _ := s.SyncCatalog(context.Background()); ev != nil {
		t.Fatal("a catalog without skills")
	}
	put(".dsh/skills/a/SKILL.md", "---\nname: a\ndescription: first\n---\nbody")
	ev, err := s.SyncCatalog(context.Background())
	if err != nil || ev == nil || !strings.Contains(string(ev.Data), `"source":{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"first"}]}`) {
		t.Fatalf("first catalog %v %s", err, ev.Data)
	}
	if ev, _ := s.SyncCatalog(context.Background()); ev != nil {
		t.Fatal("an unchanged catalog was entered again")
	}
	put(".dsh/skills/b/SKILL.md", "---\nname: b\ndescription: second\n---\nbody")
	ev, _ = s.SyncCatalog(context.Background())
	if ev == nil || !strings.Contains(string(ev.Data), `"update":true`) {
		t.Fatalf("no update: %v", ev)
	}
	evs, _ := log.Events()
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	var d struct {
		Content []pipeline.Block `json:"content"`
	}
	json.Unmarshal(evs[0].Data, &d)
	if !strings.HasPrefix(d.Content[0].Text, "<system-reminder>\nA skill is a reusable set") {
		t.Fatalf("%q", d.Content[0].Text)
	}
}

// TestRunCodeReadsAnImage: a run_code program calls read_image as a nested
// call and gets its value {path, image}; the image lands in the store.
func TestRunCodeReadsAnImage(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs node (run_code's runtime)")
	}
	ws := sandboxtest.TempDir(t, "dshsim-stack-image-")
	log := sessiontest.New(t, "0b7c2a52-5a8e-4d8e-9a55-000000000003", ws)
	red, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")
	if err := os.WriteFile(filepath.Join(ws, "red.png"), red, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := stack.New(stack.Config{Workspace: ws, Log: log, Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever, ToolOptions: stack.ToolOptions{
		ToolsMode: stack.ToolsCode,
	},
		ExtraTools: stack.ExtraTools{
			Images: &stack.ImagesConfig{DshHome: filepath.Join(ws, ".dsh"), Model: "vision", ImageModels: []string{"vision"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sessiontest.StartTurn(t, log)
	r := runCode(s, context.Background(), "call_img", `const v = await tools.read_image({ file_path: "red.png" }); return v.image;`)
	if r.IsError {
		t.Fatalf("%s", r.Text())
	}
	for _, want := range []string{`"attachmentId": "sha256:b1ff9c8ea3a780bad09b346c423d2d0e46815926879b18e841d928376a946640"`, `"mediaType": "image/png"`, `"width": 1`, `"name": "red.png"`} {
		if !strings.Contains(r.Text(), want) {
			t.Errorf("run_code result lacks %s:\n%s", want, r.Text())
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".dsh/attachments/v1/objects/b1/b1ff9c8ea3a780bad09b346c423d2d0e46815926879b18e841d928376a946640")); err != nil {
		t.Fatalf("not offloaded: %v", err)
	}
}

// TestServedNestedCallThroughRunCode: a run_code program's tools.cordis_run
// reaches the served body through the nested-call bridge: the program gets
// the served value, the dispatch event logs the served content, and a
// nested call whose value the recording does not show rejects in the
// program (a model's call of it would be served).
func TestServedNestedCallThroughRunCode(t *testing.T) {
	value := `{"status":"running","pluginId":"snap-1","packageId":"pkg-1","pluginRunId":"run-1","host":{"status":"running"}}`
	recs := map[string]served.Recorded{
		"c:code:1": {Name: "cordis_run", Arguments: json.RawMessage(`{"pluginId":"snap-1","packageId":"pkg-1","mode":"run"}`),
			Content: []pipeline.Block{pipeline.TextBlock("snap-1/pkg-1 is running (run-1).")}, Value: json.RawMessage(value)},
		"c:code:2": {Name: "cordis_stop", Arguments: json.RawMessage(`{"pluginId":"snap-1"}`),
			Content: []pipeline.Block{pipeline.TextBlock("Dynamic Plugin snap-1 is stopped; its definition and versions remain.")}, ValueNote: "no value renders to it"},
	}
	s, _, log := composed(t, stack.Config{Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever, ToolOptions: stack.ToolOptions{
		ToolsMode: stack.ToolsBoth,
	}, ExtraTools: stack.ExtraTools{
		Cordis: true,
		Served: &stack.ServedConfig{Source: served.Table(recs)},
	},
	})
	sessiontest.StartTurn(t, log)
	program := `const run = await tools.cordis_run({ pluginId: 'snap-1', packageId: 'pkg-1', mode: 'run' });
let stop;
try { await tools.cordis_stop({ pluginId: 'snap-1' }); } catch (e) { stop = e.name + ": " + e.message; }
return { run, stop };`
	raw, _ := json.Marshal(map[string]string{"code": program, "description": "run and stop"})
	res := s.Execute(context.Background(), "c", "run_code", raw)
	want := "{\n  \"run\": {\n    \"status\": \"running\",\n    \"pluginId\": \"snap-1\",\n    \"packageId\": \"pkg-1\",\n    \"pluginRunId\": \"run-1\",\n    \"host\": {\n      \"status\": \"running\"\n    }\n  },\n" +
		"  \"stop\": \"ToolCallError: served cordis_stop: nested call c:code:2: the recording does not show the value the program received (no value renders to it)\"\n}"
	if res.IsError || res.Text() != want {
		t.Fatalf("result %q\nwant   %q", res.Text(), want)
	}
	evs, err := log.Events()
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	for _, e := range evs {
		if e.Type == "tool/code-dispatch" {
			var d struct {
				Content []pipeline.Block `json:"content"`
			}
			json.Unmarshal(e.Data, &d)
			logged = append(logged, d.Content[0].Text)
		}
	}
	if len(logged) != 2 || logged[0] != "snap-1/pkg-1 is running (run-1)." || !strings.HasPrefix(logged[1], "Error: served cordis_stop: nested call c:code:2") {
		t.Errorf("dispatch contents %q", logged)
	}
}
