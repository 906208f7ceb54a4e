package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// outsideDir is a directory outside the workspace and outside every temp
// area (the workspace itself lives under /tmp, which workspace-write allows).
// It is under /var/tmp, not beside the package: the checkout itself may live
// under /tmp (a CI clone), where it would be inside the fence.
func outsideDir(t *testing.T) string { return sandboxtest.TempDir(t, "dshsim-outside-") }

// approver is a constructed escalation approver that answers with outcome
// and records what it was asked.
type approver struct {
	outcome string // "allow" or "reject"
	asked   []string
}

func (a *approver) fn(ctx context.Context, call *pipeline.Call, req escalation.Request) (sandbox.Mode, error) {
	if req.Requested == req.Effective || !escalation.IsWider(req.Effective, req.Requested) {
		return escalation.Approve(ctx, req, escalation.Deps{})
	}
	a.asked = append(a.asked, escalation.Reason(req.Requested, req.Justification))
	if a.outcome == "allow" {
		return req.Requested, nil
	}
	return "", errors.New(`the user rejected escalating this ` + req.Subject + ` to "` + string(req.Requested) + `"`)
}

func TestSandbox(t *testing.T) {
	denied := func(mode string) string {
		return "Error: [sandbox: file access denied under " + mode + " mode]\n[sandbox: escalation available — retry this exact operation once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]"
	}
	cases := []struct {
		name      string
		mode      sandbox.Mode // "" = non-confining composition
		answer    string       // approver outcome; "" = no approval service
		tool      string
		args      string // <out> = outside dir, <ws> = workspace
		setup     func(r *rig, out string)
		text      string
		code      string
		asked     int
		mutated   string // file (with <out>/<ws>) that must exist afterwards
		untouched string // file that must not exist afterwards
	}{
		{name: "workspace-write denies a write outside the fence with marker and hint", mode: sandbox.WorkspaceWrite, tool: "write",
			args: `{"file_path":"<out>/x.txt","content":"x"}`, text: denied("workspace-write"), code: "FS_SANDBOX_DENIED", untouched: "<out>/x.txt"},
		{name: "workspace-write allows the workspace", mode: sandbox.WorkspaceWrite, tool: "write",
			args: `{"file_path":"in.txt","content":"x"}`, text: readOut("in.txt", "Created file"), mutated: "<ws>/in.txt"},
		{name: "read-only denies every mutation", mode: sandbox.ReadOnly, tool: "write",
			args: `{"file_path":"in.txt","content":"x"}`, text: denied("read-only"), code: "FS_SANDBOX_DENIED", untouched: "<ws>/in.txt"},
		{name: "read-only edit of an unread file is not observed before the fence", mode: sandbox.ReadOnly, tool: "edit",
			setup: func(r *rig, _ string) { r.put("e.txt", "a") },
			args:  `{"file_path":"e.txt","old_string":"a","new_string":"b"}`, text: `Error: edit requires reading "<ws>/e.txt" first` + remRead, code: "FS_NOT_OBSERVED"},
		{name: "read-only write over an unread file is denied before the existence check", mode: sandbox.ReadOnly, tool: "write",
			setup: func(r *rig, _ string) { r.put("e.txt", "a") },
			args:  `{"file_path":"e.txt","content":"b"}`, text: denied("read-only"), code: "FS_SANDBOX_DENIED"},
		{name: "reads are never fenced", mode: sandbox.ReadOnly, tool: "read",
			setup: func(r *rig, out string) { os.WriteFile(filepath.Join(out, "o.txt"), []byte("hi\n"), 0o644) },
			args:  `{"file_path":"<out>/o.txt"}`, text: "<path><out>/o.txt</path>\n<type>file</type>\n<content>\n1: hi\n\n(End of file - total 1 lines)\n</content>"},
		{name: "danger-full-access is unfenced", mode: sandbox.DangerFullAccess, tool: "write",
			args: `{"file_path":"<out>/x.txt","content":"x"}`, text: "<path><out>/x.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>", mutated: "<out>/x.txt"},
		{name: "approved escalation runs the write under the granted mode", mode: sandbox.WorkspaceWrite, answer: "allow", tool: "write",
			args: `{"file_path":"<out>/x.txt","content":"x","sandbox_permissions":"danger-full-access","justification":"the user asked"}`,
			text: "<path><out>/x.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>", asked: 1, mutated: "<out>/x.txt"},
		{name: "rejected escalation writes nothing", mode: sandbox.ReadOnly, answer: "reject", tool: "write",
			args: `{"file_path":"in.txt","content":"x","sandbox_permissions":"workspace-write","justification":"needed"}`,
			text: `Error: the user rejected escalating this operation to "workspace-write"`, asked: 1, untouched: "<ws>/in.txt"},
		{name: "same-mode request runs without approval", mode: sandbox.WorkspaceWrite, answer: "allow", tool: "write",
			args: `{"file_path":"in.txt","content":"x","sandbox_permissions":"workspace-write","justification":"same"}`,
			text: readOut("in.txt", "Created file"), mutated: "<ws>/in.txt"},
		{name: "same-mode request still needs a justification", mode: sandbox.WorkspaceWrite, answer: "allow", tool: "write",
			args: `{"file_path":"in.txt","content":"x","sandbox_permissions":"workspace-write"}`,
			text: "Error: invalid escalation: sandbox_permissions requires a justification", untouched: "<ws>/in.txt"},
		{name: "justification without sandbox_permissions is refused", mode: sandbox.WorkspaceWrite, answer: "allow", tool: "edit",
			args: `{"file_path":"in.txt","old_string":"a","new_string":"b","justification":"why"}`,
			text: "Error: invalid escalation: justification is only valid together with sandbox_permissions"},
		{name: "blank justification is refused", mode: sandbox.ReadOnly, answer: "allow", tool: "write",
			args: `{"file_path":"in.txt","content":"x","sandbox_permissions":"workspace-write","justification":"  "}`,
			text: "Error: invalid justification: expected a non-empty sentence", untouched: "<ws>/in.txt"},
		{name: "a narrower request is not strictly wider", mode: sandbox.DangerFullAccess, answer: "allow", tool: "write",
			args: `{"file_path":"in.txt","content":"x","sandbox_permissions":"workspace-write","justification":"why"}`,
			text: `Error: sandbox escalation to "workspace-write" is not strictly wider than this call's current "danger-full-access" mode`, untouched: "<ws>/in.txt"},
		{name: "no approval service refuses a widening", mode: sandbox.ReadOnly, tool: "write",
			args: `{"file_path":"in.txt","content":"x","sandbox_permissions":"workspace-write","justification":"why"}`,
			text: `Error: sandbox escalation to "workspace-write" requires approval, but no approval service is composed`, untouched: "<ws>/in.txt"},
		{name: "an out-of-enum sandbox_permissions is invalid arguments", mode: sandbox.ReadOnly, answer: "allow", tool: "write",
			args: `{"file_path":"in.txt","content":"x","sandbox_permissions":"read-only","justification":"why"}`,
			text: `Error: invalid arguments: "sandbox_permissions" must be one of ["workspace-write","danger-full-access"]`, code: "INVALID_ARGS", untouched: "<ws>/in.txt"},
		{name: "unadvertised sandbox_permissions is not available", tool: "write",
			args: `{"file_path":"in.txt","content":"x","sandbox_permissions":"danger-full-access","justification":"why"}`,
			text: "Error: sandbox_permissions is not available in this composition (no sandboxing filesystem to escalate)", untouched: "<ws>/in.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := outsideDir(t)
			ap := &approver{outcome: c.answer}
			var opts []rigOpt
			if c.mode != "" {
				var fn escalation.Func
				if c.answer != "" {
					fn = ap.fn
				}
				opts = append(opts, withPolicy(c.mode, fn))
			}
			r := newRig(t, opts...)
			if c.setup != nil {
				c.setup(r, out)
			}
			sub := func(s string) string { return strings.NewReplacer("<out>", out, "<ws>", r.ws).Replace(s) }
			res, err := r.run(r.agent("A"), c.tool, sub(c.args))
			var text string
			if err != nil {
				text = "Error: " + pipeline.ErrorMessage(err)
			} else {
				text = res.Content[0].Text
			}
			if text != sub(c.text) {
				t.Fatalf("text\n%q\nwant\n%q", text, sub(c.text))
			}
			if _, code, _ := pipeline.CodeOf(err); code != c.code {
				t.Fatalf("code %q, want %q", code, c.code)
			}
			if len(ap.asked) != c.asked {
				t.Fatalf("approver asked %d times (%q), want %d", len(ap.asked), ap.asked, c.asked)
			}
			if c.mutated != "" {
				if _, err := os.Stat(sub(c.mutated)); err != nil {
					t.Fatalf("%s not written: %v", c.mutated, err)
				}
			}
			if c.untouched != "" {
				if _, err := os.Stat(sub(c.untouched)); !os.IsNotExist(err) {
					t.Fatalf("%s was written", c.untouched)
				}
			}
		})
	}
}

func TestSchemas(t *testing.T) {
	for _, c := range []struct {
		name       string
		opts       []rigOpt
		advertised bool
	}{
		{"non-confining composition advertises no escalation fields", nil, false},
		{"confining composition advertises sandbox_permissions and justification", []rigOpt{withPolicy(sandbox.WorkspaceWrite, nil)}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.opts...)
			var b strings.Builder
			for _, tl := range r.tools.All() {
				b.WriteString(tl.Name + "\n" + tl.Description + "\n" + string(tl.Parameters) + "\n\n")
				has := strings.Contains(string(tl.Parameters), `"sandbox_permissions"`)
				if tl.Name != "read" && has != c.advertised {
					t.Fatalf("%s advertises sandbox_permissions = %v", tl.Name, has)
				}
				if tl.Name == "read" && has {
					t.Fatal("read advertises sandbox_permissions")
				}
			}
			harness.Golden(t, "testdata", "schemas-"+map[bool]string{false: "plain", true: "confining"}[c.advertised]+".golden", []byte(b.String()))
		})
	}
}
