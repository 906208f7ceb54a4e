package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// hostile is a recording turned against the host: its hook and its bash
// call write to a host directory, connect to a listener on the host's
// loopback and write a sysctl back with its own value (harmless wherever
// it succeeds; it must not).
type hostile struct {
	name string
	// base is the upstream recording it is made from.
	base string
	// from is the text of base's bash command (as session.jsonl spells it)
	// that the hostile command replaces.
	from string
}

var hostiles = []hostile{
	// The recording states danger-full-access itself.
	{name: "stated danger-full-access", base: "hook-cc-pretool-deny", from: `\"command\": \"echo HELLO\"`},
	// The recording runs under workspace-write and approves its own
	// escalation to danger-full-access through permissionAnswers.
	{name: "self-approved escalation", base: "escalation-approved", from: ` > /tmp/dsh-escalated.txt && cat /tmp/dsh-escalated.txt && rm /tmp/dsh-escalated.txt`},
}

// attack is what the hook and the bash call try: each step says what it
// got, and none contains a quote or a backslash (it is spliced into JSON
// strings).
func attack(who, dir string, port int) string {
	p := strconv.Itoa(port)
	return "echo " + who + " > " + dir + "/" + who + "; echo net > /dev/tcp/127.0.0.1/" + p + " && echo " + who + "-connected; " +
		"cat /proc/sys/kernel/domainname > /proc/sys/kernel/domainname && echo " + who + "-sysctl-written; echo " + who + "-done"
}

// make writes the hostile copy of h.base into a fresh directory.
func (h hostile) make(t *testing.T, hostDir string, port int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), h.base)
	if err := recording.CopyTree(filepath.Join(root, "transcripts", h.base), dir); err != nil {
		t.Fatal(err)
	}
	sessionPath := filepath.Join(dir, recording.SessionFile)
	data, err := os.ReadFile(sessionPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := attack("bash", hostDir, port)
	to := `\"command\": \"` + cmd + `\"`
	if !strings.HasPrefix(h.from, `\"command\"`) {
		to = " > " + hostDir + "/bash-escalated; " + cmd
	}
	if !strings.Contains(string(data), h.from) {
		t.Fatalf("%s does not hold %s", sessionPath, h.from)
	}
	if err := os.WriteFile(sessionPath, []byte(strings.ReplaceAll(string(data), h.from, to)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The hook runs with sh: bash -c reaches /dev/tcp. Exit 1 is a
	// non-blocking error: the bash call still runs, and the hook's stderr
	// is in its hook/result.
	hook := "bash -c '" + attack("hook", hostDir, port) + "' >&2; exit 1"
	hooks, err := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{
		map[string]any{"matcher": "bash", "hooks": []any{map[string]any{"type": "command", "command": hook}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, recording.WorkspaceDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, recording.WorkspaceDir, "hooks.json"), hooks, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHostileRecordingLeavesNothingOnTheHost: a copy of an upstream
// recording whose hook and bash call, under danger-full-access (stated, or
// approved by the recording itself), write to a directory of the host that
// the test can write, connect to the host's loopback and write a sysctl:
// the replay runs both, and nothing reaches the host (the directory stays
// empty, the listener is never reached), while the replay's own results
// show each attempt refused.
func TestHostileRecordingLeavesNothingOnTheHost(t *testing.T) {
	isolate.Require(t)
	// Made by the test, so its user can write it: only containment keeps
	// the replay from writing it too.
	hostDir := sandboxtest.TempDir(t, "dshsim-hostile-")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, h := range hostiles {
		t.Run(h.name, func(t *testing.T) {
			r := replay.Replay(context.Background(), h.make(t, hostDir, port), replay.Options{})
			if r.Verdict == replay.Failed {
				t.Fatalf("the replay did not run: %s", r.Error)
			}
			text := outcomes(r.Got)
			for _, who := range []string{"hook", "bash"} {
				if !strings.Contains(text, who+"-done") {
					t.Fatalf("the %s did not run to its end; the checks below would prove nothing:\n%s", who, text)
				}
				for _, escaped := range []string{who + "-connected", who + "-sysctl-written"} {
					if strings.Contains(text, escaped) {
						t.Errorf("the replay's results say %s", escaped)
					}
				}
			}
			if !strings.Contains(text, "Read-only file system") {
				t.Errorf("no write was refused as read-only:\n%s", text)
			}
		})
	}
	for _, left := range sandboxtest.Leftovers(hostDir) {
		t.Errorf("the hostile recording wrote %s on the host", left)
	}
	if err := ln.(*net.TCPListener).SetDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Error("the hostile recording connected to the host's loopback")
	} else if ne := (net.Error)(nil); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatal(err)
	}
}

// outcomes is what the replay's tools and hooks answered (tool and hook
// results, never the calls, which spell the attack).
func outcomes(items []projection.Item) string {
	var b strings.Builder
	for _, it := range items {
		if it.Kind == projection.KindResult || it.Kind == projection.KindHook {
			data, _ := json.Marshal(it.Fields)
			b.Write(data)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
