package policy_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
)

func newLog(t *testing.T, cwd string) *session.Log {
	t.Helper()
	return sessiontest.New(t, "sess", cwd)
}

func TestResolve(t *testing.T) {
	wd, _ := os.Getwd()
	tests := []struct {
		name     string
		cfg      policy.Config
		cwd      string // session header cwd; "-" = agentless
		modes    []sandbox.Mode
		approved sandbox.Mode
		want     sandbox.Policy
	}{
		{name: "default is read-only rooted at the process cwd", cwd: "-", want: sandbox.Policy{Mode: "read-only", WorkspaceRoot: wd}},
		{name: "configured mode and root, root normalised", cfg: policy.Config{DefaultMode: "workspace-write", Root: "/srv/a/../b/"}, cwd: "-", want: sandbox.Policy{Mode: "workspace-write", WorkspaceRoot: "/srv/b"}},
		{name: "session mode and cwd win over the configuration", cfg: policy.Config{DefaultMode: "read-only", Root: "/srv"}, cwd: "/home/u/p", modes: []sandbox.Mode{"danger-full-access", "workspace-write"}, want: sandbox.Policy{Mode: "workspace-write", WorkspaceRoot: "/home/u/p", SessionID: "sess"}},
		{name: "no cwd falls back to the configured root", cfg: policy.Config{Root: "/srv"}, cwd: "", want: sandbox.Policy{Mode: "read-only", WorkspaceRoot: "/srv", SessionID: "sess"}},
		{name: "approved mode beats the session mode and keeps the root", cfg: policy.Config{Root: "/srv"}, cwd: "/home/u/p", modes: []sandbox.Mode{"workspace-write"}, approved: "danger-full-access", want: sandbox.Policy{Mode: "danger-full-access", WorkspaceRoot: "/home/u/p", SessionID: "sess"}},
		{name: "agentless resolve with an approved mode", cfg: policy.Config{Root: "/srv"}, cwd: "-", approved: "workspace-write", want: sandbox.Policy{Mode: "workspace-write", WorkspaceRoot: "/srv"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := policy.NewResolver(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var agent *pipeline.Agent
			if tc.cwd != "-" {
				l := newLog(t, tc.cwd)
				for _, m := range tc.modes {
					if _, err := policy.SetSandboxMode(l, m); err != nil {
						t.Fatal(err)
					}
				}
				agent = &pipeline.Agent{ID: "a", Session: l}
			}
			got, err := r.Resolve(agent, tc.approved)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T) error
		want string
	}{
		{name: "invalid configured mode is rejected at load", run: func(t *testing.T) error {
			_, err := policy.NewResolver(policy.Config{DefaultMode: "wide-open", Root: "/"})
			return err
		}, want: `sandbox-policy: config field defaultMode: unknown sandbox mode "wide-open"`},
		{name: "relative configured root is rejected verbatim", run: func(t *testing.T) error {
			_, err := policy.NewResolver(policy.Config{Root: "rel/dir"})
			return err
		}, want: "sandbox-policy: workspace root must be an absolute execution-world path"},
		{name: "relative session cwd is rejected verbatim", run: func(t *testing.T) error {
			r, _ := policy.NewResolver(policy.Config{Root: "/srv"})
			_, err := r.Resolve(&pipeline.Agent{ID: "a", Session: newLog(t, "rel")}, "")
			return err
		}, want: "sandbox-policy: workspace root must be an absolute execution-world path"},
		{name: "invalid mode in the log names seq and field", run: func(t *testing.T) error {
			l := newLog(t, "/ws")
			l.Append(session.KindSandboxMode, map[string]string{"mode": "yolo"})
			r, _ := policy.NewResolver(policy.Config{Root: "/srv"})
			_, err := r.Resolve(&pipeline.Agent{ID: "a", Session: l}, "")
			return err
		}, want: `session event seq 0 (sandbox/mode) field mode: unknown sandbox mode "yolo"`},
		{name: "setting an invalid mode appends nothing", run: func(t *testing.T) error {
			_, err := policy.SetSandboxMode(newLog(t, "/ws"), "yolo")
			return err
		}, want: `unknown sandbox mode "yolo"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(t)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %v, want prefix %q", err, tc.want)
			}
		})
	}
}

func TestSessionModeFold(t *testing.T) {
	l := newLog(t, "/ws")
	ev, _ := l.Events()
	if _, ok, _ := policy.SessionMode(ev); ok {
		t.Error("empty log folded to a mode")
	}
	e, _ := policy.SetSandboxMode(l, sandbox.WorkspaceWrite)
	if string(e.Data) != `{"mode":"workspace-write"}` {
		t.Errorf("event data %s", e.Data)
	}
	policy.SetSandboxMode(l, sandbox.ReadOnly)
	ev, _ = l.Events()
	if m, ok, _ := policy.SessionMode(ev); !ok || m != sandbox.ReadOnly || len(ev) != 2 {
		t.Errorf("fold = %s %v (%d events)", m, ok, len(ev))
	}
	// A resumed session reconstructs its mode from the log alone.
	l2, err := session.Open(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	r, _ := policy.NewResolver(policy.Config{DefaultMode: "danger-full-access", Root: "/srv"})
	if p, _ := r.Resolve(&pipeline.Agent{ID: "a", Session: l2}, ""); p.Mode != sandbox.ReadOnly {
		t.Errorf("resumed mode %s", p.Mode)
	}
}

func TestSandboxText(t *testing.T) {
	tests := []struct {
		name string
		mode sandbox.Mode
		root string
		want string
	}{
		{name: "read-only", mode: "read-only", root: "/p", want: "Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox cannot modify files in the standing mode. Do not refuse a required modification from this policy alone: try an available tool normally and follow any denial and escalation guidance it returns."},
		{name: "workspace-write quotes the root as JSON", mode: "workspace-write", root: "/projects/current", want: `Current DSH file policy: workspace-write. Any available operation enforced by the DSH file sandbox may modify files under the session workspace: "/projects/current". Some platform temporary areas may also be writable.`},
		{name: "workspace-write escapes quotes but not html", mode: "workspace-write", root: `/a"b<c>`, want: `Current DSH file policy: workspace-write. Any available operation enforced by the DSH file sandbox may modify files under the session workspace: "/a\"b<c>". Some platform temporary areas may also be writable.`},
		{name: "danger-full-access", mode: "danger-full-access", root: "/p", want: "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file modifications by available operations."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := policy.SandboxText(tc.mode, tc.root); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestSnapshotDataMatchesRecordings renders the runtime-context message of
// every upstream recording and compares it byte for byte with the
// recording's first one (id aside).
func TestSnapshotDataMatchesRecordings(t *testing.T) {
	dirs, _ := filepath.Glob("../../transcripts/*/session.jsonl")
	if len(dirs) == 0 {
		t.Fatal("no recordings found under transcripts/")
	}
	for _, path := range dirs {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			raw, ok := firstSnapshot(t, path)
			if !ok {
				t.Skip("no runtime context: the recording holds no step")
			}
			var rec policy.SnapshotMessage
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(raw, []byte(`"plugin":"@deepseek-ai/dsh-system-prompt"`)) {
				// upstream's standalone overlays (fs-search, pwsh) compose no
				// policy plugins: their step 1 logs no runtime context
				if _, err := os.Stat(filepath.Join(filepath.Dir(path), "dshsim.replay.json")); err == nil && bytes.Contains(raw, []byte(`"source":{"kind":"fallback"}`)) {
					t.Skip("a standalone overlay's recording: no runtime-context message (its seq 5 is the session title)")
				}
				t.Fatalf("seq 5 is no runtime-context message: %s", raw)
			}
			mode := sandbox.DangerFullAccess
			ap := approval.Never
			if strings.Contains(rec.Content[0].Text, "workspace-write") {
				mode, ap = sandbox.WorkspaceWrite, approval.Ask
			}
			got := policy.SnapshotData(policy.Sections(sandbox.Policy{Mode: mode, WorkspaceRoot: "{{cwd}}"}, ap), rec.ID)
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(got)
			if g := strings.TrimSpace(buf.String()); g != string(raw) {
				t.Errorf("got  %s\nwant %s", g, raw)
			}
		})
	}
}

// firstSnapshot returns the data of the first runtime-context message of
// the recorded log at path (seq 5 in most: after the prompt; later when the
// workspace instructions or a hook come first), which must read without a
// bad line; ok is false for a log without one (a scenario without a step).
func firstSnapshot(t *testing.T, path string) (data []byte, ok bool) {
	t.Helper()
	c, err := session.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Bad) > 0 {
		t.Fatalf("%s: %v", path, c.Bad[0])
	}
	for _, e := range c.Events {
		var m policy.SnapshotMessage
		if e.Type == "user/message" && json.Unmarshal(e.Data, &m) == nil && m.Source.Plugin == policy.SnapshotPlugin {
			return e.Data, true
		}
	}
	return nil, false
}

func TestSyncContextAppendsOnlyWhenChanged(t *testing.T) {
	l := newLog(t, "/ws")
	r, _ := policy.NewResolver(policy.Config{DefaultMode: "workspace-write", Root: "/srv"})
	step := func(wantAppend bool) string {
		t.Helper()
		e, err := r.SyncContext(l)
		if err != nil {
			t.Fatal(err)
		}
		if (e != nil) != wantAppend {
			t.Fatalf("appended = %v, want %v", e != nil, wantAppend)
		}
		if e != nil && string(e.SurfaceOp) != `"append"` {
			t.Errorf("snapshot surfaceOp %s, want \"append\" as upstream stores it", e.SurfaceOp)
		}
		ev, _ := l.Events()
		text, _ := policy.LastSnapshot(ev)
		return text
	}
	first := step(true)
	want := "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.\n\n" +
		policy.SandboxText("workspace-write", "/ws") + "\n\n" + approval.ContextText(approval.Ask)
	if first != want {
		t.Errorf("first snapshot\n%s\nwant\n%s", first, want)
	}
	if step(false) != first {
		t.Error("unchanged policy changed the snapshot")
	}
	r.SwitchPreset(l, "danger-full-access", nil)
	third := step(true)
	if !strings.Contains(third, "danger-full-access") || !strings.Contains(third, "Approval prompts are disabled") {
		t.Errorf("latest switch not reflected: %s", third)
	}
	step(false)
}

func TestDerivePreset(t *testing.T) {
	tests := []struct {
		name   string
		knobs  policy.Knobs
		preset string // last permission/preset event, "" = none
		want   string
	}{
		{name: "read-only pair", knobs: policy.Knobs{Sandbox: "read-only", Approval: "ask"}, want: "read-only"},
		{name: "workspace-write pair", knobs: policy.Knobs{Sandbox: "workspace-write", Approval: "ask"}, want: "workspace-write"},
		{name: "danger-full-access pair", knobs: policy.Knobs{Sandbox: "danger-full-access", Approval: "never"}, want: "danger-full-access"},
		{name: "unmatched pair derives custom", knobs: policy.Knobs{Sandbox: "danger-full-access", Approval: "ask"}, want: "custom"},
		{name: "stale preset event does not override the knobs", knobs: policy.Knobs{Sandbox: "read-only", Approval: "never"}, preset: "read-only", want: "custom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ev []session.Event
			if tc.preset != "" {
				ev = append(ev, session.Event{Type: session.KindPermissionPreset, Data: json.RawMessage(`{"preset":"` + tc.preset + `"}`)})
			}
			if got := policy.DerivePreset(tc.knobs, ev); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSwitchPresetAppendsOnlyDifferences(t *testing.T) {
	l := newLog(t, "/ws")
	r, _ := policy.NewResolver(policy.Config{DefaultMode: "workspace-write", Root: "/srv"})
	types := func(es []session.Event) string {
		var s []string
		for _, e := range es {
			s = append(s, e.Type+" "+string(e.Data))
		}
		return strings.Join(s, "; ")
	}
	tests := []struct {
		target string
		want   string
	}{
		{target: "workspace-write", want: ""},
		{target: "read-only", want: `permission/preset {"preset":"read-only"}; sandbox/mode {"mode":"read-only"}`},
		{target: "danger-full-access", want: `permission/preset {"preset":"danger-full-access"}; sandbox/mode {"mode":"danger-full-access"}; approval/policy {"policy":"never"}`},
		{target: "danger-full-access", want: ""},
		{target: "workspace-write", want: `permission/preset {"preset":"workspace-write"}; sandbox/mode {"mode":"workspace-write"}; approval/policy {"policy":"ask"}`},
	}
	for _, tc := range tests {
		es, err := r.SwitchPreset(l, tc.target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := types(es); got != tc.want {
			t.Errorf("switch to %s appended %q, want %q", tc.target, got, tc.want)
		}
	}
	if _, err := r.SwitchPreset(l, policy.Custom, nil); err == nil {
		t.Error("custom accepted as a switch target")
	}
}

func TestSeedSessionAddsOnlyMissingFacts(t *testing.T) {
	r, _ := policy.NewResolver(policy.Config{DefaultMode: "workspace-write", Root: "/srv"})
	tests := []struct {
		name  string
		prior func(l *session.Log)
		want  string
	}{
		{name: "fresh session gets all three facts", prior: func(*session.Log) {}, want: "permission/preset,sandbox/mode,approval/policy"},
		{name: "seeded mode is kept, the rest added", prior: func(l *session.Log) { policy.SetSandboxMode(l, sandbox.ReadOnly) }, want: "permission/preset,approval/policy"},
		{name: "complete session gains nothing", prior: func(l *session.Log) {
			r.SeedSession(l, "read-only")
		}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLog(t, "/ws")
			tc.prior(l)
			es, err := r.SeedSession(l, "workspace-write")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Type)
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("appended %v, want %s", got, tc.want)
			}
		})
	}
}
