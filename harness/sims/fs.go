package sims

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/fs"
)

// fsStep is one constructed agent call or one constructed user action.
type fsStep struct {
	title string
	tool  string // agent call; "" = user action
	args  string
	user  func(ws string) error
	want  string // "accepted" or "refused": the sim fails if the stack disagrees
}

// fsSim is one run of the fs sim: the real file tools in a registry on a
// real workspace, the session the constructed agent calls in, and the
// report.
type fsSim struct {
	ws, settings string
	local        *fsobserve.Local
	obs          *fsobserve.Observations
	reg          *pipeline.Registry
	agent        *pipeline.Agent
	target       fsobserve.Target // settings.txt, resolved
	versions     map[string]string
	calls        int
	b            bytes.Buffer
}

// fsSteps are the sim's steps, in order; settings is the file's path.
func fsSteps(settings string) []fsStep {
	return []fsStep{
		{title: "the user creates settings.txt", user: func(string) error {
			return os.WriteFile(settings, []byte("color: blue\nsize: 10\n"), 0o644)
		}},
		{title: "edit of a file the agent never read", tool: "edit", args: `{"file_path":"settings.txt","old_string":"blue","new_string":"green"}`, want: "refused"},
		{title: "read, then the same edit", tool: "read", args: `{"file_path":"settings.txt"}`, want: "accepted"},
		{tool: "edit", args: `{"file_path":"settings.txt","old_string":"blue","new_string":"green"}`, want: "accepted"},
		{title: "the user changes the file in an editor meanwhile", user: func(string) error {
			return os.WriteFile(settings, []byte("color: green\nsize: 12\ntheme: dark\n"), 0o644)
		}},
		{title: "write with the now stale version", tool: "write", args: `{"file_path":"settings.txt","content":"color: green\nsize: 10\nfont: mono\n"}`, want: "refused"},
		{title: "re-read, then write again", tool: "read", args: `{"file_path":"settings.txt"}`, want: "accepted"},
		{tool: "write", args: `{"file_path":"settings.txt","content":"color: green\nsize: 12\ntheme: dark\nfont: mono\n"}`, want: "accepted"},
	}
}

// The fs sim: read-before-write with the real file tools on a real directory.
func runFS(env *harness.Env) (map[string][]byte, error) {
	dirs, err := tempDirs(env, 2)
	if err != nil {
		return nil, err
	}
	ws, logDir := dirs[0], dirs[1]
	norm := harness.NewNormalizer().Workspace(ws).Temp(logDir)
	sim, err := newFSSim(ws)
	if err != nil {
		return nil, err
	}
	log, err := session.Create(filepath.Join(logDir, "session.jsonl"), session.Header{ID: "fs-observe-agent", Cwd: ws})
	if err != nil {
		return nil, err
	}
	defer log.Close()
	sim.agent = &pipeline.Agent{ID: "agent", Session: log}

	b := &sim.b
	b.WriteString("fs-observe: read before write; the version is compared under the file lock\n")
	b.WriteString("real: the read/write/edit tools (pipeline registry, observation policy, local provider) on a real directory <ws>\n")
	b.WriteString("constructed: the agent making the calls (session fs-observe-agent) and the user editing settings.txt meanwhile\n")
	b.WriteString("versions are <dev>:<ino>:<size>:<mtimeNs>:<ctimeNs> stat tokens, shown as v1, v2, ... in order of appearance\n")
	n := 0
	for _, s := range fsSteps(sim.settings) {
		if s.title != "" {
			n++
			fmt.Fprintf(b, "\n%d. %s\n", n, s.title)
		}
		if s.user != nil {
			err = sim.userStep(s)
		} else {
			err = sim.agentStep(s)
		}
		if err != nil {
			return nil, err
		}
	}
	return map[string][]byte{"txt/fs-observe.txt": norm.Bytes(b.Bytes())}, nil
}

// newFSSim registers the real file tools for workspace ws.
func newFSSim(ws string) (*fsSim, error) {
	local, err := fsobserve.NewLocal(fsobserve.WithCwd(ws))
	if err != nil {
		return nil, err
	}
	sim := &fsSim{ws: ws, settings: filepath.Join(ws, "settings.txt"), local: local, obs: fsobserve.NewObservations(), reg: pipeline.NewRegistry(), versions: map[string]string{}}
	tools, err := fs.New(fs.Config{FS: local, Observations: sim.obs})
	if err != nil {
		return nil, err
	}
	for _, t := range tools {
		if _, err := sim.reg.Register(t.Def); err != nil {
			return nil, err
		}
	}
	if sim.target, err = local.Resolve("settings.txt", ws); err != nil {
		return nil, err
	}
	return sim, nil
}

// label names a version v1, v2, ... in order of appearance ("" is absent).
func (sim *fsSim) label(v string) string {
	if v == "" {
		return "absent"
	}
	if l, ok := sim.versions[v]; ok {
		return l
	}
	sim.versions[v] = fmt.Sprintf("v%d", len(sim.versions)+1)
	return sim.versions[v]
}

// onDisk is settings.txt's version label and content.
func (sim *fsSim) onDisk() (string, string, error) {
	info, ok, err := sim.local.Stat(sim.target)
	if err != nil || !ok {
		return "", "", fmt.Errorf("fs sim: stat settings.txt: exists=%v: %v", ok, err)
	}
	data, err := os.ReadFile(sim.settings)
	return sim.label(info.Version), string(data), err
}

// userStep is the constructed user changing the file.
func (sim *fsSim) userStep(s fsStep) error {
	if err := s.user(sim.ws); err != nil {
		return err
	}
	v, content, err := sim.onDisk()
	if err != nil {
		return err
	}
	fmt.Fprintf(&sim.b, "user (constructed) writes <ws>/settings.txt; on disk now %s:\n", v)
	writeQuoted(&sim.b, "  | ", content)
	return nil
}

// agentStep is one call of the constructed agent; the sim fails when the
// stack's verdict is not the step's.
func (sim *fsSim) agentStep(s fsStep) error {
	sim.calls++
	log := sim.agent.Session
	call := pipeline.NewCall(fmt.Sprintf("call-%d", sim.calls), s.tool, json.RawMessage(s.args), sim.agent, context.Background())
	before := observed(sim.obs, log.ID(), sim.target.Key, sim.label)
	res := sim.reg.Execute(call)
	after := observed(sim.obs, log.ID(), sim.target.Key, sim.label)
	v, content, err := sim.onDisk()
	if err != nil {
		return err
	}
	verdict := "accepted"
	if res.IsError {
		verdict = "refused"
	}
	if verdict != s.want {
		return fmt.Errorf("fs sim: %s %s was %s, want %s: %s", s.tool, s.args, verdict, s.want, res.Text())
	}
	b := &sim.b
	fmt.Fprintf(b, "agent → %s %s\n", s.tool, s.args)
	fmt.Fprintf(b, "  observed before: %s\n", before)
	writeQuoted(b, "  result: ", res.Text())
	if res.Error != nil && res.Error.Info != nil {
		info, _ := json.Marshal(res.Error.Info)
		fmt.Fprintf(b, "  error: %s\n", info)
	}
	if len(res.Meta) > 0 && s.tool != "read" {
		fmt.Fprintf(b, "  meta: %s\n", res.Meta)
	}
	fmt.Fprintf(b, "  observed after: %s\n", after)
	fmt.Fprintf(b, "  => %s\n", strings.ToUpper(verdict))
	fmt.Fprintf(b, "  on disk: %s\n", v)
	if s.tool != "read" {
		writeQuoted(b, "  | ", content)
	}
	return nil
}

// observed describes what the session has recorded for key.
func observed(obs *fsobserve.Observations, session, key string, label func(string) string) string {
	o, seen := obs.Lookup(session, key)
	switch {
	case !seen:
		return "nothing"
	case !o.Present:
		return "absent"
	default:
		return "present at " + label(o.Version)
	}
}

// writeQuoted writes text line by line, the first line after prefix and the
// rest indented under it; a trailing newline adds no empty line.
func writeQuoted(b *bytes.Buffer, prefix, text string) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	pad := strings.Repeat(" ", len([]rune(prefix)))
	if strings.TrimSpace(prefix) == "|" {
		pad = prefix
	}
	for i, l := range lines {
		if i == 0 {
			b.WriteString(strings.TrimRight(prefix+l, " ") + "\n")
		} else {
			b.WriteString(strings.TrimRight(pad+l, " ") + "\n")
		}
	}
}
