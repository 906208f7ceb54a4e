package fs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
)

// rig is a real provider and real tools on a real temp directory.
type rig struct {
	t      *testing.T
	ws     string
	fs     *fsobserve.Local
	obs    *fsobserve.Observations
	tools  *Tools
	agents map[string]*pipeline.Agent
}

type rigOpt func(*Config)

func withPolicy(mode sandbox.Mode, esc escalation.Func) rigOpt {
	return func(c *Config) {
		c.Policy = func(call *pipeline.Call) (sandbox.Policy, error) {
			root := c.FS.Cwd()
			if call.Agent() != nil && call.Agent().Session != nil {
				root = call.Agent().Session.Header().Cwd
			}
			return sandbox.Policy{Mode: mode, WorkspaceRoot: root, SessionID: call.SessionID()}, nil
		}
		c.Escalate = esc
	}
}

func bare() rigOpt { return func(c *Config) { c.Observations = nil } }

func newRig(t *testing.T, opts ...rigOpt) *rig {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fs, err := fsobserve.NewLocal(fsobserve.WithCwd(ws))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{FS: fs, Observations: fsobserve.NewObservations()}
	for _, o := range opts {
		o(&cfg)
	}
	tools, err := build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, ws: ws, fs: fs, obs: cfg.Observations, tools: tools, agents: map[string]*pipeline.Agent{}}
}

// agent returns the constructed agent named id, with a real session log whose
// cwd is the workspace.
func (r *rig) agent(id string) *pipeline.Agent {
	if a := r.agents[id]; a != nil {
		return a
	}
	a := &pipeline.Agent{ID: id, Session: sessiontest.New(r.t, "session-"+id, r.ws)}
	r.agents[id] = a
	return a
}

func (r *rig) tool(name string) pipeline.Tool {
	for _, tl := range r.tools.All() {
		if tl.Name == name {
			return tl
		}
	}
	r.t.Fatalf("no tool %q", name)
	return pipeline.Tool{}
}

// run calls tool name for agent (nil = agentless) with JSON args.
func (r *rig) run(agent *pipeline.Agent, name, args string) (pipeline.Output, error) {
	call := pipeline.NewCall("call-"+name, name, json.RawMessage(args), agent, context.Background())
	tl := r.tool(name)
	if err := pipeline.CheckArgs(tl, call); err != nil {
		return pipeline.Output{}, err
	}
	return tl.Run(context.Background(), call)
}

// render shows a result as the model and the session log would see it, with
// the workspace normalised to <ws>.
func (r *rig) render(out pipeline.Output, err error) string {
	var b strings.Builder
	if err != nil {
		b.WriteString("isError: true\ntext: Error: " + pipeline.ErrorMessage(err) + "\n")
		if name, code, ok := pipeline.CodeOf(err); ok {
			b.WriteString(`error: {"name":"` + name + `","code":"` + code + `"}` + "\n")
		}
	} else {
		b.WriteString("isError: false\ntext: ")
		for _, c := range out.Content {
			b.WriteString(c.Text)
		}
		b.WriteString("\nmeta: " + string(out.Meta) + "\n")
	}
	return strings.ReplaceAll(b.String(), r.ws, "<ws>")
}

func (r *rig) path(rel string) string { return filepath.Join(r.ws, rel) }

func (r *rig) put(rel, content string) {
	r.t.Helper()
	harness.MustWrite(r.t, r.path(rel), content)
}

func (r *rig) content(rel string) (string, bool) {
	b, err := os.ReadFile(r.path(rel))
	if err != nil {
		return "", false
	}
	return string(b), true
}
