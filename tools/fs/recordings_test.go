package fs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
)

// recordedResult is the part of a recorded tool/result event the file tools
// determine.
type recordedResult struct {
	Message struct {
		Content []struct {
			Content []pipeline.Block `json:"content"`
			IsError bool             `json:"isError"`
		} `json:"content"`
	} `json:"message"`
	Meta  json.RawMessage `json:"meta"`
	Error json.RawMessage `json:"error"`
}

type recordedCall struct {
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// TestRecordings replays every fs tool call of the upstream recordings
// against the real tools on a copy of the recorded workspace and compares the
// result text, isError, meta and error info byte for byte.
func TestRecordings(t *testing.T) {
	root := filepath.Join("..", "..", "transcripts")
	cases := []struct {
		name string
		mode sandbox.Mode
	}{
		{"fs-read", sandbox.DangerFullAccess},
		{"fs-write", sandbox.DangerFullAccess},
		{"fs-edit", sandbox.DangerFullAccess},
		{"fs-policy-reject", sandbox.DangerFullAccess},
		{"fs-escalation-approved", sandbox.WorkspaceWrite},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(root, c.name)
			events := readEvents(t, filepath.Join(dir, "session.jsonl"))
			var approved []string
			allowOnce := func(ctx context.Context, call *pipeline.Call, req escalation.Request) (sandbox.Mode, error) {
				if req.Requested == req.Effective || !escalation.IsWider(req.Effective, req.Requested) {
					return escalation.Approve(ctx, req, escalation.Deps{})
				}
				approved = append(approved, escalation.Reason(req.Requested, req.Justification))
				return req.Requested, nil
			}
			r := newRig(t, withPolicy(c.mode, allowOnce))
			copyTree(t, filepath.Join(dir, "workspace"), r.ws)
			agent := r.agent("recorded")
			var wantAsked []string
			pending := map[string]recordedCall{}
			calls := 0
			for _, ev := range events {
				switch ev.Type {
				case "approval/asked":
					var a struct {
						Reason string `json:"reason"`
					}
					json.Unmarshal(ev.Data, &a)
					wantAsked = append(wantAsked, a.Reason)
				case "tool/call":
					var rc recordedCall
					if err := json.Unmarshal(ev.Data, &rc); err != nil {
						t.Fatal(err)
					}
					pending[rc.CallID] = rc
				case "tool/result":
					var meta struct {
						Message struct {
							Source struct {
								CallID string `json:"callId"`
							} `json:"source"`
						} `json:"message"`
					}
					json.Unmarshal(ev.Data, &meta)
					rc, ok := pending[meta.Message.Source.CallID]
					if !ok {
						t.Fatalf("result without call in %s", c.name)
					}
					var want recordedResult
					if err := json.Unmarshal(ev.Data, &want); err != nil {
						t.Fatal(err)
					}
					out, err := r.run(agent, rc.Name, rc.Arguments)
					calls++
					compareRecorded(t, r, rc, want, out, err)
				}
			}
			if calls == 0 {
				t.Fatal("no tool calls replayed")
			}
			if strings.Join(approved, "|") != strings.Join(wantAsked, "|") {
				t.Fatalf("approval reasons %q, recorded %q", approved, wantAsked)
			}
		})
	}
}

func compareRecorded(t *testing.T, r *rig, rc recordedCall, want recordedResult, out pipeline.Output, err error) {
	t.Helper()
	norm := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(r.ws), []byte("{{cwd}}")) }
	wantBlock := want.Message.Content[0]
	var gotText string
	var gotMeta, gotError []byte
	if err != nil {
		gotText = "Error: " + pipeline.ErrorMessage(err)
		if name, code, ok := pipeline.CodeOf(err); ok {
			gotError = marshal(pipeline.ErrorInfo{Name: name, Code: code})
		}
	} else {
		for _, b := range out.Content {
			gotText += b.Text
		}
		gotMeta = out.Meta
	}
	if (err != nil) != wantBlock.IsError {
		t.Errorf("%s %s: isError %v, recorded %v (%v)", rc.Name, rc.Arguments, err != nil, wantBlock.IsError, err)
	}
	if got := string(norm([]byte(gotText))); got != wantBlock.Content[0].Text {
		t.Errorf("%s %s: text\n%q\nrecorded\n%q", rc.Name, rc.Arguments, got, wantBlock.Content[0].Text)
	}
	if got := norm(gotMeta); !bytes.Equal(got, want.Meta) {
		t.Errorf("%s %s: meta\n%s\nrecorded\n%s", rc.Name, rc.Arguments, got, want.Meta)
	}
	if !bytes.Equal(gotError, want.Error) {
		t.Errorf("%s %s: error\n%s\nrecorded\n%s", rc.Name, rc.Arguments, gotError, want.Error)
	}
}

type rawEvent struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

func readEvents(t *testing.T, path string) []rawEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rawEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var ev rawEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// copyTree copies the recorded workspace files (writable copies).
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			os.MkdirAll(filepath.Join(to, e.Name()), 0o755)
			copyTree(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
