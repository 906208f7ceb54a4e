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

// The fs sim: read-before-write with the real file tools on a real directory.
func runFS(env *harness.Env) (map[string][]byte, error) {
	ws, err := env.TempDir()
	if err != nil {
		return nil, err
	}
	logDir, err := env.TempDir()
	if err != nil {
		return nil, err
	}
	norm := harness.NewNormalizer().Workspace(ws).Temp(logDir)
	settings := filepath.Join(ws, "settings.txt")

	local, err := fsobserve.NewLocal(fsobserve.WithCwd(ws))
	if err != nil {
		return nil, err
	}
	obs := fsobserve.NewObservations()
	tools, err := fs.New(fs.Config{FS: local, Observations: obs})
	if err != nil {
		return nil, err
	}
	reg := pipeline.NewRegistry()
	for _, t := range tools.All() {
		if _, err := reg.Register(t); err != nil {
			return nil, err
		}
	}
	log, err := session.Create(filepath.Join(logDir, "session.jsonl"), session.Header{ID: "fs-observe-agent", Cwd: ws})
	if err != nil {
		return nil, err
	}
	defer log.Close()
	agent := &pipeline.Agent{ID: "agent", Session: log}

	versions := map[string]string{}
	label := func(v string) string {
		if v == "" {
			return "absent"
		}
		if l, ok := versions[v]; ok {
			return l
		}
		versions[v] = fmt.Sprintf("v%d", len(versions)+1)
		return versions[v]
	}
	target, err := local.Resolve("settings.txt", ws)
	if err != nil {
		return nil, err
	}
	onDisk := func() (string, string, error) {
		info, ok, err := local.Stat(target)
		if err != nil || !ok {
			return "", "", fmt.Errorf("fs sim: stat settings.txt: exists=%v: %v", ok, err)
		}
		data, err := os.ReadFile(settings)
		return label(info.Version), string(data), err
	}

	steps := []fsStep{
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

	var b bytes.Buffer
	b.WriteString("fs-observe: read before write; the version is compared under the file lock\n")
	b.WriteString("real: the read/write/edit tools (pipeline registry, observation policy, local provider) on a real directory <ws>\n")
	b.WriteString("constructed: the agent making the calls (session fs-observe-agent) and the user editing settings.txt meanwhile\n")
	b.WriteString("versions are <dev>:<ino>:<size>:<mtimeNs>:<ctimeNs> stat tokens, shown as v1, v2, ... in order of appearance\n")
	n, calls := 0, 0
	for _, s := range steps {
		if s.title != "" {
			n++
			fmt.Fprintf(&b, "\n%d. %s\n", n, s.title)
		}
		if s.user != nil {
			if err := s.user(ws); err != nil {
				return nil, err
			}
			v, content, err := onDisk()
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&b, "user (constructed) writes <ws>/settings.txt; on disk now %s:\n", v)
			writeQuoted(&b, "  | ", content)
			continue
		}
		calls++
		call := pipeline.NewCall(fmt.Sprintf("call-%d", calls), s.tool, json.RawMessage(s.args), agent, context.Background())
		before := observed(obs, log.ID(), target.Key, label)
		res := reg.Execute(call)
		after := observed(obs, log.ID(), target.Key, label)
		v, content, err := onDisk()
		if err != nil {
			return nil, err
		}
		verdict := "accepted"
		if res.IsError {
			verdict = "refused"
		}
		if verdict != s.want {
			return nil, fmt.Errorf("fs sim: %s %s was %s, want %s: %s", s.tool, s.args, verdict, s.want, res.Text())
		}
		fmt.Fprintf(&b, "agent → %s %s\n", s.tool, s.args)
		fmt.Fprintf(&b, "  observed before: %s\n", before)
		writeQuoted(&b, "  result: ", res.Text())
		if res.Error != nil && res.Error.Info != nil {
			info, _ := json.Marshal(res.Error.Info)
			fmt.Fprintf(&b, "  error: %s\n", info)
		}
		if len(res.Meta) > 0 && s.tool != "read" {
			fmt.Fprintf(&b, "  meta: %s\n", res.Meta)
		}
		fmt.Fprintf(&b, "  observed after: %s\n", after)
		fmt.Fprintf(&b, "  => %s\n", strings.ToUpper(verdict))
		fmt.Fprintf(&b, "  on disk: %s\n", v)
		if s.tool != "read" {
			writeQuoted(&b, "  | ", content)
		}
	}
	return map[string][]byte{"txt/fs-observe.txt": norm.Bytes(b.Bytes())}, nil
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
