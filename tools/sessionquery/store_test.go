package sessionquery

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Session ids of the store in these tests.
const (
	callerID    = "11111111-1111-4111-8111-111111111111"
	neighbourID = "22222222-2222-4222-8222-222222222222" // the caller's workspace
	strangerID  = "33333333-3333-4333-8333-333333333333" // another workspace
)

// twoWorkspaces writes a store holding sessions of two workspaces, /ws/a
// (the caller's and a neighbour's) and /ws/b (a stranger's), each with one
// user message naming its session, plus a file that is not a log; it
// returns the store and the caller.
func twoWorkspaces(t *testing.T) (string, *pipeline.Agent) {
	t.Helper()
	dir := t.TempDir()
	var caller *session.Log
	for _, s := range []struct{ id, cwd, text string }{
		{callerID, "/ws/a", "caller says hello"},
		{neighbourID, "/ws/a", "neighbour secret in the same workspace"},
		{strangerID, "/ws/b", "stranger secret of another workspace"},
	} {
		l, err := session.Create(filepath.Join(dir, s.id+".jsonl"), session.Header{ID: s.id, Cwd: s.cwd}, session.WithClock(clock()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		if _, err := l.AppendWith("user/message", msg{Content: []pipeline.Block{pipeline.TextBlock(s.text)}, Source: map[string]string{"kind": "user"}, Role: "user", ID: s.id}, session.AppendOptions{SurfaceOp: "append"}); err != nil {
			t.Fatal(err)
		}
		if s.id == callerID {
			caller = l
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.jsonl"), []byte("not a log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, &pipeline.Agent{ID: "root", Session: caller}
}

// TestStoreKeepsQueriesInTheirWorkspace: with sessions of two workspaces in
// the store, session_event_read and session_event_search read another
// session of the caller's workspace, and refuse the other workspace's (and
// an id the store does not hold) as outside the caller's workspace, showing
// nothing of it.
func TestStoreKeepsQueriesInTheirWorkspace(t *testing.T) {
	dir, caller := twoWorkspaces(t)
	cfg := Config{Sessions: Store(dir)}
	for _, tc := range []struct {
		name, tool, args, want string
	}{
		{"read a neighbour", ReadName, `{"seq":0,"session_id":"` + neighbourID + `"}`, "neighbour secret in the same workspace"},
		{"search a neighbour", SearchName, `{"query":"secret","session_id":"` + neighbourID + `"}`, "neighbour secret in the same workspace"},
		{"read a stranger", ReadName, `{"seq":0,"session_id":"` + strangerID + `"}`, "Error: session target is outside the caller workspace"},
		{"search a stranger", SearchName, `{"query":"secret","session_id":"` + strangerID + `"}`, "Error: session target is outside the caller workspace"},
		{"an id the store does not hold", ReadName, `{"seq":0,"session_id":"44444444-4444-4444-8444-444444444444"}`, "Error: session target is outside the caller workspace"},
		{"the caller by id", ReadName, `{"seq":0,"session_id":"` + callerID + `"}`, "caller says hello"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCfg(t, cfg, caller, tc.tool, tc.args)
			if !strings.Contains(r.Text(), tc.want) || strings.Contains(r.Text(), "stranger secret") {
				t.Errorf("%s:\n%s\nwant %q", tc.args, r.Text(), tc.want)
			}
			if strings.HasPrefix(tc.want, "Error:") && (r.Error == nil || r.Error.Info == nil || r.Error.Info.Code != CodeUnauthorized) {
				t.Errorf("%s: error %+v, want %s", tc.args, r.Error, CodeUnauthorized)
			}
		})
	}
}

// TestStoreResolvesByHeader: the store finds a log by the id in its header,
// whatever its file name, and passes over what is not a log.
func TestStoreResolvesByHeader(t *testing.T) {
	dir, _ := twoWorkspaces(t)
	if err := os.Rename(filepath.Join(dir, strangerID+".jsonl"), filepath.Join(dir, "renamed.jsonl")); err != nil {
		t.Fatal(err)
	}
	src, ok := Store(dir)(strangerID)
	if !ok || src.ID() != strangerID || src.Header().Cwd != "/ws/b" {
		t.Fatalf("Store(%s) = %v, %v", strangerID, src, ok)
	}
	if evs, err := src.Events(); err != nil || len(evs) != 1 {
		t.Errorf("events %v, %v", evs, err)
	}
	for _, id := range []string{"", "not a log", "44444444-4444-4444-8444-444444444444"} {
		if _, ok := Store(dir)(id); ok {
			t.Errorf("Store resolved %q", id)
		}
	}
}
