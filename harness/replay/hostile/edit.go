package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// setCall gives the nth call of tool (counted from 0, in the model's
// replies: the block-end tool-call blocks) the arguments args, wherever the
// log spells that call's arguments (the reply the script is made from, the
// assistant message, tool/call).
func setCall(dir, tool string, nth int, args map[string]any) error {
	path := filepath.Join(dir, recording.SessionFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	id, err := callID(lines, tool, nth)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	argText, err := jsjson.Marshal(args)
	if err != nil {
		return err
	}
	for i, line := range lines {
		if !bytes.Contains(line, []byte(id)) {
			continue
		}
		v, err := decode(line)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		setArguments(v, id, string(argText))
		out, err := jsjson.Marshal(v)
		if err != nil {
			return err
		}
		lines[i] = append(out, '\n')
	}
	return os.WriteFile(path, bytes.Join(lines, nil), 0o644)
}

// callID is the id of the nth block-end tool-call block calling tool.
func callID(lines [][]byte, tool string, nth int) (string, error) {
	n := 0
	for i, line := range lines {
		if !bytes.Contains(line, []byte(`"block-end"`)) {
			continue
		}
		var e struct {
			Type string
			Data struct {
				Chunk struct {
					Type  string
					Block struct{ Type, ID, Name string }
				}
			}
		}
		if err := json.Unmarshal(line, &e); err != nil {
			return "", fmt.Errorf("line %d: %w", i+1, err)
		}
		b := e.Data.Chunk.Block
		if e.Type == session.KindAssistantChunk && e.Data.Chunk.Type == "block-end" && b.Type == "tool-call" && b.Name == tool {
			if n == nth {
				return b.ID, nil
			}
			n++
		}
	}
	return "", fmt.Errorf("no call %d of %s among the model's replies", nth, tool)
}

// setArguments sets "arguments" on every object of v that is call id: a
// tool-call block ({"type": "tool-call", "id": id}) or an event's data
// ({"callId": id, "arguments": ...}).
func setArguments(v any, id, args string) {
	switch x := v.(type) {
	case map[string]any:
		if (x["type"] == "tool-call" && x["id"] == id) || (x["callId"] == id && x["arguments"] != nil) {
			x["arguments"] = args
		}
		for _, c := range x {
			setArguments(c, id, args)
		}
	case []any:
		for _, c := range x {
			setArguments(c, id, args)
		}
	}
}

func decode(line []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var v any
	return v, d.Decode(&v)
}

func writeJSON(path string, v any) error {
	data, err := jsjson.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// writeHooks makes the workspace seed's hooks.json (Claude Code's format): one
// PreToolUse hook for the tools matcher matches, running command.
func writeHooks(dir, matcher, command string) error {
	ws := filepath.Join(dir, recording.WorkspaceDir)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	return writeJSON(filepath.Join(ws, "hooks.json"), map[string]any{"hooks": map[string]any{"PreToolUse": []any{
		map[string]any{"matcher": matcher, "hooks": []any{map[string]any{"type": "command", "command": command}}},
	}}})
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	data, _ := jsjson.Marshal(s)
	return strings.TrimSpace(string(data))
}
