package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/recording/recordingtest"
	"github.com/dshsim/dshsim/harness/replay/replaytest"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/tools/code/sdk"
)

const root = "../.."

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

func dirs(t *testing.T, args ...string) []string {
	t.Helper()
	var full []string
	for _, a := range args {
		full = append(full, filepath.Join(root, a))
	}
	ds, err := replay.Discover(full)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestTranscriptsMatch replays every upstream recording through the real stack.
// A recording that cannot match fails here with its exact reason; none is skipped.
// It is the corpus make race (-short) replays under the race detector: upstream's
// recordings hold background jobs, parallel calls, hooks and code mode.
func TestTranscriptsMatch(t *testing.T) {
	isolate.Require(t)
	t.Parallel() // mostly waits on its replays: it overlaps the hostile corpus
	ds := dirs(t, "transcripts")
	if len(ds) != 75 {
		t.Fatalf("transcripts/ holds %d recordings, want the fifty-five upstream ACP ones, eight headless, three JSON-RPC ones, one Python SDK one, one goal one and seven web ones (frontends/)", len(ds))
	}
	replaytest.RunParams(t, replaytest.Params{Dirs: ds, Check: func(t *testing.T, r *replay.Result) {
		if (r.Comparison.Total == 0 && !headerOnly(t, r.Dir)) || r.Comparison.Matched != r.Comparison.Total {
			t.Fatalf("match with %d/%d events", r.Comparison.Matched, r.Comparison.Total)
		}
	}})
}

// headerOnly reports a recording whose session.jsonl is its header alone:
// upstream's suite compares no log for it (a scenario without a model turn:
// a handshake, a prompt its UserPromptSubmit hook blocks), only stdout.
func headerOnly(t *testing.T, dir string) bool {
	t.Helper()
	rec := recordingtest.Load(t, dir)
	return len(rec.Events) == 0
}

func TestFlaggedRecordingsMismatch(t *testing.T) {
	tests := []struct {
		name      string
		dir       string
		flag      string // substring of a flag; "" when none
		firstPath string // path of the first differing field; "" when none
	}{
		{name: "a prompt more than recorded exhausts the script", dir: "script-exhausted",
			flag: "script exhausted: llm-replay: script exhausted — session requested model call #3 but its script has only 2; re-record the scenario", firstPath: "(item)"},
		{name: "replies never requested are flagged", dir: "unconsumed-replies", flag: "unconsumed replies: 2 of 2 model replies were never requested", firstPath: "(item)"},
		{name: "a changed seed file shows in the read result", dir: "changed-seed", firstPath: "meta.lines[0].text"},
		{name: "a nested call's logged content is compared", dir: "code-dispatch-changed", firstPath: "text"},
		{name: "the run_code wire schema is compared", dir: "run-code-schema-changed", flag: "tool-schemas.expected.json: run_code: description: expected"},
		{name: "a recorded permission prompt the replay never raised is flagged", dir: "prompt-not-asked",
			flag: "stdout.expected.jsonl:3: expected a session/request_permission, the replay sent a session/update agent_message_chunk"},
		{name: "a JSON-RPC run's final response is compared", dir: "jsonrpc-final-response-changed",
			flag: `result.expected.json: field finalResponse: expected "SDK snapshot NOT OK", got "SDK snapshot OK"`},
		{name: "automatic compaction off: the overflowed call ends the turn", dir: "compaction-off", firstPath: "kind",
			flag: "unconsumed replies: 2 of 4 model replies were never requested"},
		{name: "a JSON-RPC run's session.event records are compared", dir: "jsonrpc-notification-changed",
			flag: "notifications.expected.jsonl: the session's event records differ from our log's events from the prompt on: turn 1, turn/end"},
		{name: "a Python SDK run's final response is compared", dir: "python-sdk-final-response-changed",
			flag: `result.json:3: field final_response: expected "ADVANCED_EXECUTABLE_NOT_OK", got "ADVANCED_EXECUTABLE_OK"`},
		{name: "a Python SDK run's notifications are compared beside its events", dir: "python-sdk-notification-changed",
			flag: `result.json: the session's session.event notifications differ from our log's events from the prompt on: turn 1, tool/result advanced-code ok: text: expected "43", got "42"`},
		{name: "a dynamic tool with a definition the checks refuse registers nothing", dir: "python-sdk-bad-dynamic-definition",
			flag: "result.json: the session's event records differ from our log's events from the prompt on: turn 1, tool/result advanced-run ok: isError: expected false, got true", firstPath: "isError"},
	}
	results := replay.Run(context.Background(), dirs(t, "testdata/replay/flagged"), replay.RunOptions{Parallel: 2})
	byName := map[string]*replay.Result{}
	for _, r := range results {
		byName[r.Name] = r
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := byName[tc.dir]
			if r == nil {
				t.Fatalf("no result for %s", tc.dir)
			}
			if r.Verdict != replay.Mismatch {
				t.Fatalf("verdict %s (%s), want mismatch", r.Verdict, r.Summary())
			}
			if tc.flag != "" && !strings.Contains(strings.Join(r.Flags, "\n"), tc.flag) {
				t.Errorf("flags %q, want one containing %q", r.Flags, tc.flag)
			}
			first := r.Comparison.First()
			if tc.firstPath == "" {
				if first != nil {
					t.Errorf("unexpected mismatch %+v", first)
				}
				return
			}
			if first == nil || len(first.Diffs) == 0 || first.Diffs[0].Path != tc.firstPath {
				t.Fatalf("first mismatch %+v, want a diff at %s\n%s", first, tc.firstPath, r.Detail())
			}
		})
	}
}

func TestChangedSeedDiffIsReadable(t *testing.T) {
	r := replay.Replay(context.Background(), filepath.Join(root, "testdata/replay/flagged/changed-seed"), replay.Options{})
	d := r.Detail()
	for _, want := range []string{
		"first difference: turn 1, tool/result call_00_hHPZCcivsIkXAGS9jTGy8417 ok",
		`meta.lines[0].text: expected "hello", got "goodbye"`,
		`text: expected "<path>{{cwd}}/greeting.txt</path>\n<type>file</type>\n<content>\n1: hello`,
		"first difference at byte 65",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("detail lacks %q:\n%s", want, d)
		}
	}
}

// TestBadRecordingsDoNotStopTheOthers replays bad recordings beside a good one.
func TestBadRecordingsDoNotStopTheOthers(t *testing.T) {
	ds := append(dirs(t, "testdata/replay/bad"), dirs(t, "transcripts/fs-read")...)
	results := replay.Run(context.Background(), ds, replay.RunOptions{Parallel: 2})
	for _, r := range results {
		switch {
		case r.Name == "fs-read":
			if r.Verdict != replay.Match {
				t.Errorf("fs-read: %s\n%s", r.Summary(), r.Detail())
			}
		case r.Verdict != replay.Failed:
			t.Errorf("%s: verdict %s, want error", r.Name, r.Verdict)
		case !strings.HasPrefix(r.Error, r.Name+"/"):
			t.Errorf("%s: error %q does not name the recording's file", r.Name, r.Error)
		}
	}
	if replay.AllMatch(results) {
		t.Error("AllMatch is true for a run with bad recordings")
	}
}

func TestSelect(t *testing.T) {
	ds := []string{"a/r1", "a/r2", "a/r3", "a/r4", "a/r5"}
	tests := []struct {
		name  string
		shard string
		want  string
	}{
		{name: "first of two shards takes every other recording from the first", shard: "1/2", want: "a/r1,a/r3,a/r5"},
		{name: "second of two shards takes the rest", shard: "2/2", want: "a/r2,a/r4"},
		{name: "one shard is everything", shard: "1/1", want: "a/r1,a/r2,a/r3,a/r4,a/r5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := replay.ParseShard(tc.shard)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(replay.Select(ds, replay.RunOptions{Shard: s}), ",")
			if got != tc.want {
				t.Errorf("shard %s = %s, want %s", tc.shard, got, tc.want)
			}
		})
	}
	for _, bad := range []string{"0/2", "3/2", "1/0", "x", "1/2/3"} {
		if _, err := replay.ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}

func TestSpillRootHasUpstreamLength(t *testing.T) {
	if got := replay.SpillRoot("bash-spill"); got != "/tmp/dsh-acp-snap-ee77dff02" {
		t.Errorf("SpillRoot(bash-spill) = %s, want upstream's /tmp/dsh-acp-snap-ee77dff02", got)
	}
}

func copyRecording(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(root, "transcripts", name)
	dst := filepath.Join(t.TempDir(), name)
	if err := recording.CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestProjectionFile: -update writes projection.expected.json from
// session.jsonl, a second update changes nothing, and a hand-edited (stale)
// file fails the replay with a flag naming the file.
func TestProjectionFile(t *testing.T) {
	dir := copyRecording(t, "fs-read")
	path := filepath.Join(dir, "projection.expected.json")
	os.Remove(path)
	if changed, err := replay.UpdateProjection(dir); err != nil || !slices.Equal(changed, []string{"projection.expected.json"}) {
		t.Fatalf("first update: changed %v, %v", changed, err)
	}
	child := copyRecording(t, "subagent-multi")
	os.Remove(filepath.Join(child, "projection.2.expected.json"))
	if changed, err := replay.UpdateProjection(child); err != nil || !slices.Equal(changed, []string{"projection.2.expected.json"}) {
		t.Fatalf("update of a child's projection: changed %v, %v", changed, err)
	}
	if changed, err := replay.UpdateProjection(dir); err != nil || len(changed) > 0 {
		t.Fatalf("second update: changed %v, %v", changed, err)
	}
	if r := replay.Replay(context.Background(), dir, replay.Options{}); r.Verdict != replay.Match {
		t.Fatalf("with a fresh projection file: %s\n%s", r.Summary(), r.Detail())
	}
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), "1: hello", "1: HELLO", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := replay.Replay(context.Background(), dir, replay.Options{})
	if r.Verdict != replay.Mismatch || !strings.Contains(strings.Join(r.Flags, "\n"), "projection.expected.json is stale against session.jsonl") {
		t.Fatalf("stale projection file: %s, flags %q", r.Verdict, r.Flags)
	}
	if r.Comparison.Mismatched != 0 {
		t.Errorf("the replay itself still matches session.jsonl; got %d mismatches", r.Comparison.Mismatched)
	}
}

// TestOurLogHasUpstreamsEventSequence: for every recording, our log holds
// the same event types in the same order as upstream's (packed rows
// expanded), so every seq means the same event (session_event_read reads
// them), and the model is named as constructed.
func TestOurLogHasUpstreamsEventSequence(t *testing.T) {
	skipSweepUnderShort(t)
	isolate.Require(t)
	logs := t.TempDir()
	for _, r := range replay.Run(context.Background(), dirs(t, "transcripts"), replay.RunOptions{Parallel: 2, Options: replay.Options{LogDir: logs}}) {
		t.Run(r.Name, func(t *testing.T) {
			if r.Verdict != replay.Match {
				t.Fatalf("%s\n%s", r.Summary(), r.Detail())
			}
			rec := recordingtest.Load(t, r.Dir)
			if len(rec.Events) == 0 {
				return // upstream logged events it does not keep (its fixture is the header)
			}
			if rec.Frontend != recording.ACP {
				// another front end's log is its application's (the product
				// CLI logs a second request/header when its reasoning effort
				// changes, a resumed session its seeded events): its tool
				// boundary is what the replay matches
				return
			}
			c, err := session.Read(r.LogPath)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for _, e := range rec.Events {
				want = append(want, fmt.Sprintf("%d %s", e.Seq, e.Type))
			}
			model := ""
			for _, e := range c.Events {
				got = append(got, fmt.Sprintf("%d %s", e.Seq, e.Type))
				if e.Type == "assistant/message" && model == "" {
					var d struct {
						Message struct {
							Source struct{ Model string } `json:"source"`
						} `json:"message"`
					}
					_ = json.Unmarshal(e.Data, &d)
					model = d.Message.Source.Model
				}
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("our log differs from the recording's event sequence:\n%s", harness.LineDiff("events", []byte(strings.Join(want, "\n")+"\n"), []byte(strings.Join(got, "\n")+"\n")))
			}
			if model != replay.ModelName && slices.ContainsFunc(rec.Events, func(e recording.Event) bool { return e.Type == "assistant/message" }) {
				t.Errorf("assistant/message model %q, want %q", model, replay.ModelName)
			}
		})
	}
}

// TestProjectionFilesAreFresh is the golden check of transcripts/*/
// projection.expected.json; DSHSIM_UPDATE=1 rewrites them.
func TestProjectionFilesAreFresh(t *testing.T) {
	for _, d := range dirs(t, "transcripts") {
		t.Run(filepath.Base(d), func(t *testing.T) {
			if harness.Updating() {
				if _, err := replay.UpdateProjection(d); err != nil {
					t.Fatal(err)
				}
				return
			}
			rec := recordingtest.Load(t, d)
			fresh, err := replay.ExpectedProjection(rec)
			if err != nil {
				t.Fatal(err)
			}
			committed, err := os.ReadFile(filepath.Join(d, recording.ProjectionFile))
			if err != nil {
				t.Fatalf("%v (generate with DSHSIM_UPDATE=1 go test ./harness/replay or dsh-replay -update)", err)
			}
			if string(committed) != string(fresh) {
				t.Errorf("%s is stale:\n%s", recording.ProjectionFile, harness.LineDiff(recording.ProjectionFile, committed, fresh))
			}
			for _, c := range rec.ComparedChildren() {
				file := recording.ChildSidecar(recording.ProjectionFile, c.Index)
				fresh, err := replay.ExpectedChildProjection(rec, c)
				if err != nil {
					t.Fatal(err)
				}
				committed, err := os.ReadFile(filepath.Join(d, file))
				if err != nil {
					t.Fatalf("%v (generate with DSHSIM_UPDATE=1 go test ./harness/replay or dsh-replay -update)", err)
				}
				if string(committed) != string(fresh) {
					t.Errorf("%s is stale:\n%s", file, harness.LineDiff(file, committed, fresh))
				}
			}
		})
	}
}

// TestTimeoutIsFlagged: a replay stopped by its time limit aborts the call in
// flight and says why, instead of reporting a bare mismatch.
func TestTimeoutIsFlagged(t *testing.T) {
	r := replay.Replay(context.Background(), filepath.Join(root, "transcripts", "bash-spill"), replay.Options{Timeout: time.Millisecond})
	if r.Verdict != replay.Mismatch || !strings.Contains(strings.Join(r.Flags, "\n"), "the replay was stopped after 1ms") {
		t.Fatalf("verdict %s (%s), flags %q", r.Verdict, r.Error, r.Flags)
	}
}

// TestWorkspaceWriteRecordingsUnderLandlock replays the workspace-write
// recordings with Landlock as the only sandbox backend: its default path,
// in this process.
func TestWorkspaceWriteRecordingsUnderLandlock(t *testing.T) {
	for _, r := range landlockReplays(t, "transcripts", "escalation", 3, "") {
		if !strings.Contains(strings.Join(r.Notes, "\n"), "in the landlock-inproc sandbox backend (full enforcement); it cannot govern chmod, chown, utimes, setxattr, chattr (") {
			t.Errorf("%s: notes %q do not name the in-process Landlock path and what it cannot govern", r.Name, r.Notes)
		}
	}
}

// TestConfinedFactsReachTheLog replays the oracle recordings that run
// confined bash and run_code calls with Landlock as the only backend (its
// default path, in this process): they still match (the model's text is
// upstream's), and the tool/result events of our log carry the run's
// sandbox facts, naming the in-process path, Landlock's Ungoverned list
// included.
func TestConfinedFactsReachTheLog(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	for _, r := range landlockReplays(t, "testdata/replay/oracle", "^(code-workspace-write|escalation-read-only-bash)$", 2, logs) {
		if confinedResults(t, r.LogPath) == 0 {
			t.Errorf("%s: no tool/result of our log carries Landlock's sandbox facts", r.Name)
		}
	}
}

// landlockReplays replays the recordings under dir whose names run matches
// with Landlock as the only sandbox backend (its default path, in this
// process), writing our logs under logDir ("" writes none); t fails unless
// there are want of them, each a match.
func landlockReplays(t *testing.T, dir, run string, want int, logDir string) []*replay.Result {
	t.Helper()
	isolate.Require(t)
	sandboxtest.RequireLandlock(t, 1)
	launcher := sandboxtest.Runner(t)
	ds := replay.Select(dirs(t, dir), replay.RunOptions{Run: regexp.MustCompile(run)})
	results := replay.Run(context.Background(), ds, replay.RunOptions{Parallel: 2,
		Options: replay.Options{SandboxChain: []string{"landlock"}, LauncherPath: launcher, LogDir: logDir}})
	if len(results) != want {
		t.Fatalf("%d recordings match %s, want %d", len(results), run, want)
	}
	for _, r := range results {
		if r.Verdict != replay.Match {
			t.Errorf("%s\n%s", r.Summary(), r.Detail())
		}
	}
	return results
}

// confinedResults counts the tool/result events of the log at path whose
// sandbox facts name the in-process Landlock path, and fails t for one that
// names it without Landlock's Ungoverned list.
func confinedResults(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := sandbox.DialectOf(sandbox.BackendLandlock)
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct {
			Type string
			Data struct{ Sandbox *sandbox.Facts }
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Type != "tool/result" || e.Data.Sandbox == nil || e.Data.Sandbox.Backend != inproc.Backend {
			continue
		}
		n++
		if strings.Join(e.Data.Sandbox.Ungoverned, "|") != strings.Join(d.Ungoverned, "|") {
			t.Errorf("%s: a confined result's facts %+v lack Landlock's Ungoverned list", path, e.Data.Sandbox)
		}
	}
	return n
}

// TestSandboxBackendSetting: a recording's sandboxBackend pins the backend
// over the run's chain and says so.
func TestSandboxBackendSetting(t *testing.T) {
	isolate.Require(t)
	dir := copyRecording(t, "escalation-approved")
	if err := os.WriteFile(filepath.Join(dir, recording.SettingsFile), []byte(`{"sandboxBackend": "landlock"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := replay.Replay(context.Background(), dir, replay.Options{SandboxChain: []string{"bwrap"}, LauncherPath: sandboxtest.Runner(t)})
	if r.Verdict != replay.Match {
		t.Fatalf("%s\n%s", r.Summary(), r.Detail())
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{`dshsim.replay.json pins sandboxBackend "landlock" over the run's backend chain [bwrap]`, "in the landlock-inproc sandbox backend"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}

// TestOurRecordingsMatch replays the recordings of ours (testdata/replay/ours,
// authored after upstream's scenarios from upstream's recorded texts; see the
// note in each dshsim.replay.json): a real admission refusal (bound 1), the
// Landlock runner capped at ABI 3 with its own partial notice, a runner path
// that does not exist (SANDBOX_UNAVAILABLE in the foreground; a background job
// killed before exit whose notice reaches the model a step later), a prompt
// cancelled while the model streams, two reads pooled in one step, a
// handshake without a model call (no policy stated: the default profile),
// a child's served call answered from the child's log, and a context
// overflow that a retry policy would retry too, recovered by the
// compaction first (its log upstream's compaction-recovery, unchanged).
func TestOurRecordingsMatch(t *testing.T) {
	isolate.Require(t)
	sandboxtest.RequireLandlock(t, 4)
	ds := dirs(t, "testdata/replay/ours")
	if len(ds) != 8 {
		t.Fatalf("%d recordings of ours, want 8", len(ds))
	}
	replaytest.RunParams(t, replaytest.Params{Dirs: ds, Options: replay.Options{LauncherPath: sandboxtest.Runner(t)}})
}

// TestModelWaitsForBackgroundJobs: the constructed model answers once the
// running background jobs settled (testdata/replay/settle). A job that
// computes for 300 ms of wall time before it writes settled.txt, under the
// platform sandbox (bwrap's PID namespace inside the replay's), has written
// it when the next step's check runs (with a fixed 50 ms it has not), and
// the wait ends without the cap once it sleeps; a job that never sleeps
// holds the reply only until the cap, and the replay says so.
func TestModelWaitsForBackgroundJobs(t *testing.T) {
	isolate.Require(t)
	results := replay.Run(context.Background(), dirs(t, "testdata/replay/settle"), replay.RunOptions{Parallel: 2})
	if len(results) != 2 {
		t.Fatalf("%d recordings in testdata/replay/settle, want 2", len(results))
	}
	capped := func(r *replay.Result) string {
		for _, n := range r.Notes {
			if strings.HasPrefix(n, "the constructed model stopped waiting ") {
				return n
			}
		}
		return ""
	}
	for _, r := range results {
		t.Run(r.Name, func(t *testing.T) {
			if r.Verdict != replay.Match {
				t.Fatalf("%s\n%s", r.Summary(), r.Detail())
			}
			note := capped(r)
			switch r.Name {
			case "busy-then-write":
				if note != "" {
					t.Errorf("the job settled (it sleeps after writing), yet: %s", note)
				}
			case "never-settles":
				if !regexp.MustCompile(`^the constructed model stopped waiting for the background jobs to settle before 1 of its replies: they computed for 2s of CPU time \(still running at the last: pid \d+ \(bash\) state R\)$`).MatchString(note) {
					t.Errorf("the wait for a spinning job did not end at the cap; notes: %q", r.Notes)
				}
			default:
				t.Errorf("unexpected recording %s", r.Name)
			}
		})
	}
}

// TestChangedToolSchemaIsAMismatch: a tool description or parameter of the
// sidecar that differs from the stack's is a flag naming the sidecar, the
// tool and the field; the tools the stack does not compose are named.
func TestChangedToolSchemaIsAMismatch(t *testing.T) {
	isolate.Require(t)
	dir := copyRecording(t, "text-turn")
	path := filepath.Join(dir, recording.ToolSchemasFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "Non-zero exits are reported as", "Non-zero exits show as", 1)
	s = strings.Replace(s, "Job id returned by the tool that started the background work.", "The job id.", 1)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	r := replay.Replay(context.Background(), dir, replay.Options{})
	flags := strings.Join(r.Flags, "\n")
	if r.Verdict != replay.Mismatch {
		t.Fatalf("verdict %s", r.Verdict)
	}
	for _, want := range []string{
		`tool-schemas.expected.json: bash: description: expected "Execute a bash command`,
		`tool-schemas.expected.json: job_kill: parameters.properties.job_id.description: expected "The job id.", got "Job id returned by the tool that started the background work."`,
	} {
		if !strings.Contains(flags, want) {
			t.Errorf("flags lack %q:\n%s", want, flags)
		}
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "not modelled (the stack does not compose them): create_goal, get_goal") {
		t.Errorf("notes %q do not name the tools not modelled", r.Notes)
	}
}

// TestChangedPromptSectionIsAMismatch: a section of the recorded system
// prompt that differs from the stack's is a flag naming it: a tool's
// section, the SDK's fixed instructions, code mode's tools:code-only line
// missing, and that line in a both-mode prompt.
func TestChangedPromptSectionIsAMismatch(t *testing.T) {
	isolate.Require(t)
	for _, c := range []struct {
		rec, old, new, flag string
	}{
		{"text-turn", "investigate failures before moving on", "move on",
			"system-prompt.expected.md: section tool:bash (order 105) is not a run of paragraphs of the recorded prompt"},
		{"code-mode-turn", "— `try/catch` it to handle and continue.", "— catch it.",
			"system-prompt.expected.md: section tools:sdk (order 150) is not a run of paragraphs of the recorded prompt"},
		{"code-mode-turn", sdk.CodeOnly + "\n", "",
			"system-prompt.expected.md: section tools:code-only (order 99) is not a run of paragraphs of the recorded prompt"},
		{"both-mode-turn", "Use the read tool", sdk.CodeOnly + "\n\nUse the read tool",
			"system-prompt.expected.md: the recorded prompt holds the tools:code-only line, but the recording's tool list shows both mode"},
	} {
		t.Run(c.rec+" "+c.flag[len("system-prompt.expected.md: "):], func(t *testing.T) {
			dir := copyRecording(t, c.rec)
			path := filepath.Join(dir, recording.SystemPromptFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), c.old) {
				t.Fatalf("the recorded prompt lacks %q", c.old)
			}
			if err := os.WriteFile(path, []byte(strings.Replace(string(b), c.old, c.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			r := replay.Replay(context.Background(), dir, replay.Options{})
			if r.Verdict != replay.Mismatch || !strings.Contains(strings.Join(r.Flags, "\n"), c.flag) {
				t.Fatalf("verdict %s, flags %q; want a flag %q", r.Verdict, r.Flags, c.flag)
			}
		})
	}
}

// TestSuiteSettingsWithoutFile: a recording copied from upstream as it is (no
// dshsim.replay.json) replays with upstream's suite settings for its name
// (recording.SuiteSettings): our recordings of those names, their settings
// file removed, still match and say where the settings came from; and the
// table agrees with every settings file of ours for the same scenario.
func TestSuiteSettingsWithoutFile(t *testing.T) {
	skipSweepUnderShort(t)
	isolate.Require(t)
	var names []string
	for _, d := range dirs(t, "transcripts", "testdata/replay/ours") {
		name := filepath.Base(d)
		fe, err := recording.DetectFrontend(d, name)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := recording.SuiteSettingsOf(fe)[name]
		if !ok {
			continue
		}
		rec := recordingtest.Load(t, d)
		if !rec.HasSettings {
			t.Errorf("%s: our copy has no %s; the table alone would hide a drift", name, recording.SettingsFile)
		}
		got := rec.Settings
		got.Note, want.Note = "", ""
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: recording.SuiteSettings differs from its %s (-table +file):\n%s", name, recording.SettingsFile, diff)
		}
		names = append(names, d)
	}
	if len(names) < 3 {
		t.Fatalf("only %d recordings of ours have suite settings (%v); want bash-spill, session-query-spill, missing-sandbox-runner at least", len(names), names)
	}
	for _, src := range names {
		name := filepath.Base(src)
		t.Run(replay.LogName(src), func(t *testing.T) {
			// the copy keeps its place below the tree's root: a web
			// session with session.jsonl alone is one by its place
			rel, err := filepath.Rel(root, src)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), rel)
			if err := recording.CopyTree(src, dst); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dst, recording.SettingsFile)); err != nil {
				t.Fatal(err)
			}
			r := replay.Replay(context.Background(), dst, replay.Options{LauncherPath: sandboxtest.Runner(t)})
			if r.Verdict != replay.Match {
				t.Fatalf("%s\n%s", r.Summary(), r.Detail())
			}
			if !strings.HasPrefix(r.Settings, "upstream's suite settings for "+name+" (no "+recording.SettingsFile+")") {
				t.Errorf("settings line %q does not say they are upstream's suite settings", r.Settings)
			}
		})
	}
}

// TestShelfFormSymlinks: agent-instructions as a checkout without
// symlinks stores it (AGENTS.md and nested/AGENTS.md as link stubs: files
// holding their target, no newline) matches with our settings file and with
// upstream's suite settings for the name, both of which list the links; a
// settings file that does not list them leaves the stubs plain files, and
// the instructions then differ.
func TestShelfFormSymlinks(t *testing.T) {
	isolate.Require(t)
	shelf := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "agent-instructions")
		if err := recording.CopyTree(filepath.Join(root, "transcripts", "agent-instructions"), dir); err != nil {
			t.Fatal(err)
		}
		for _, rel := range []string{"AGENTS.md", "nested/AGENTS.md"} {
			p := filepath.Join(dir, recording.WorkspaceDir, rel)
			target, err := os.Readlink(p)
			if err != nil {
				t.Fatalf("our copy's %s is no symlink: %v", rel, err)
			}
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(target), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	opt := replay.Options{LauncherPath: sandboxtest.Runner(t)}
	t.Run("settings file", func(t *testing.T) {
		r := replay.Replay(context.Background(), shelf(t), opt)
		if r.Verdict != replay.Match {
			t.Fatalf("%s\n%s", r.Summary(), r.Detail())
		}
	})
	t.Run("suite settings", func(t *testing.T) {
		dir := shelf(t)
		if err := os.Remove(filepath.Join(dir, recording.SettingsFile)); err != nil {
			t.Fatal(err)
		}
		r := replay.Replay(context.Background(), dir, opt)
		if r.Verdict != replay.Match {
			t.Fatalf("%s\n%s", r.Summary(), r.Detail())
		}
	})
	t.Run("links not listed", func(t *testing.T) {
		dir := shelf(t)
		settings := `{"workspaceContext": {"projectRootMarkers": [".dsh-project"], "compactBaselineAtRead": "nested/task.txt"}, "prepare": "delimiter-path"}`
		if err := os.WriteFile(filepath.Join(dir, recording.SettingsFile), []byte(settings), 0o644); err != nil {
			t.Fatal(err)
		}
		r := replay.Replay(context.Background(), dir, opt)
		if r.Verdict != replay.Mismatch || !strings.Contains(r.Detail(), "workspace-instructions") {
			t.Fatalf("the stubs were read as links without the setting: %s\n%s", r.Summary(), r.Detail())
		}
	})
}

// oracleDepartures are the oracle recordings our stack does not match on
// purpose: the recording's first difference must be the named one, so a
// departure cannot hide another.
var oracleDepartures = map[string]string{
	// The newer upstream runs a same-mode
	// escalation as a no-op; the recordings' version (and rc.8) refuses it.
	"escalation-mixed": `expected "Error: sandbox escalation to \"workspace-write\" is not strictly wider than this call's current \"workspace-write\" mode"`,
	// A failed search quotes rg's stderr: upstream ships ripgrep 15, which
	// prefixes its messages with "rg: "; Debian's rg 13 does not. With
	// upstream's rg (DSHSIM_RIPGREP) it matches (ripgrepDepartures).
	"fs-search-edges": `expected "Error: glob search failed (exit 2): rg: missing-dir: IO error for operation on missing-dir: No such file or directory (os error 2)", got "Error: glob search failed (exit 2): missing-dir: IO error for operation on missing-dir: No such file or directory (os error 2)"`,
	// An asynchronous spawn failure (here the missing runner's) is learnt
	// when the step that started the job has ended, as the recordings'
	// version does (docs/oracle.md, Named departures); the oracle's rc.8
	// learns of it only at its next yield, here after the turn.
	"diff-spawn-failure-notice": "first difference: turn 1, tool/call bash call_00_probe0003\n    kind: expected \"tool/call\", got \"job-notice\"",
	// What a call leaves running ends when its root exits (docs/stack.md,
	// nothing outlives its call): the line its subshell prints 100 ms later
	// is upstream's (Node waits for the pipe it holds), not ours.
	"diff-leftover-output": "first difference: turn 1, tool/result call_00_probe0001 ok\n    text: expected \"parent\\nchild\\n\", got \"parent\\n\"",
}

// TestOracleRecordingsMatch replays testdata/replay/oracle: recordings made by
// upstream's own published code (harness/oracle) from constructed model
// scripts, so every tool result, approval and hook event in them is
// upstream's. Each must match, except a departure of oracleDepartures, which
// must mismatch exactly there.
func TestOracleRecordingsMatch(t *testing.T) {
	skipSweepUnderShort(t)
	isolate.Require(t)
	ds := dirs(t, "testdata/replay/oracle")
	if len(ds) == 0 {
		t.Fatal("testdata/replay/oracle holds no recordings")
	}
	for _, r := range replay.Run(context.Background(), ds, replay.RunOptions{Parallel: 2}) {
		t.Run(r.Name, func(t *testing.T) {
			checkOracleVerdict(t, r)
		})
	}
}

// ripgrepDepartures are the departures that are Debian's rg's alone: with
// upstream's ripgrep (replay.RipgrepEnv) the recording matches.
var ripgrepDepartures = map[string]bool{"fs-search-edges": true}

// checkOracleVerdict fails t unless r matches, or mismatches with the named
// departure when oracleDepartures lists it.
func checkOracleVerdict(t *testing.T, r *replay.Result) {
	t.Helper()
	want, departs := oracleDepartures[r.Name]
	if ripgrepDepartures[r.Name] && os.Getenv(replay.RipgrepEnv) != "" {
		departs = false
	}
	switch {
	case !departs && r.Verdict != replay.Match:
		t.Fatalf("%s\n%s", r.Summary(), r.Detail())
	case departs && (r.Verdict != replay.Mismatch || !strings.Contains(r.Detail(), want)):
		t.Fatalf("want the named departure (%s), got:\n%s\n%s", want, r.Summary(), r.Detail())
	}
}

// TestEveryRecordingOnTheDefaultLandlockPath replays every recording
// (upstream's, the oracle's, ours) with Landlock as the only backend, as on
// a host without a usable bwrap, where the stack confines in this process
// by default: each still matches byte for byte, or departs as it does under
// the platform chain (the oracle's named departures), and its confined
// calls ran on the in-process path (the backend note says so), except a
// recording that names a runner, which runs the runner and says why.
func TestEveryRecordingOnTheDefaultLandlockPath(t *testing.T) {
	skipSweepUnderShort(t)
	isolate.Require(t)
	sandboxtest.RequireLandlock(t, 4)
	ds := dirs(t, "transcripts", "testdata/replay/oracle", "testdata/replay/ours")
	results := replay.Run(context.Background(), ds, replay.RunOptions{Parallel: 2,
		Options: replay.Options{SandboxChain: []string{sandbox.BackendLandlock}, LauncherPath: sandboxtest.Runner(t)}})
	if len(results) < 90 {
		t.Fatalf("%d recordings, want every one of transcripts/ and testdata/replay/{oracle,ours}", len(results))
	}
	for _, r := range results {
		t.Run(r.Name, func(t *testing.T) {
			checkOracleVerdict(t, r)
			notes := strings.Join(r.Notes, "\n")
			confined := strings.Contains(notes, " sandbox backend (")
			switch {
			case strings.Contains(notes, "dshsim.replay.json pins landlockRunner"):
				if !strings.Contains(notes, "in the landlock sandbox backend (full enforcement), through the runner: "+chain.RunnerConfigured) {
					t.Errorf("notes %q: want the runner, with the reason", notes)
				}
			case confined && !strings.Contains(notes, "in the landlock-inproc sandbox backend ("):
				t.Errorf("notes %q: want the in-process path", notes)
			}
		})
	}
}

// skipSweepUnderShort skips t under -short (make race, whose
// race-instrumented replays take several times as long): t is a sweep that
// replays every recording again, or the suite again as another user, which
// make test runs; make race keeps the other replay tests, with
// TestTranscriptsMatch's corpus.
func skipSweepUnderShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: a sweep that make test runs (make race keeps the other replay tests)")
	}
}

// TestToolsModeWithoutThePin: upstream's code-mode and both-mode recordings
// under other names and without tool-schemas.expected.json still match: the
// model's run_code calls make the mode code, and both-mode-turn's
// system-prompt.expected.md (no tools:code-only line) makes it both; without
// that file too it replays in code mode, whose run_code is the same. Each
// result says how the mode was derived.
func TestToolsModeWithoutThePin(t *testing.T) {
	isolate.Require(t)
	tests := []struct {
		src, name  string
		dropPrompt bool
		note       string
	}{
		{"code-mode-turn", "hidden-code", false, "tools mode code: no tool-schemas.expected.json; the model calls run_code and no other tool at top level; system-prompt.expected.md holds the tools:code-only line"},
		{"both-mode-turn", "hidden-both", false, "tools mode both: no tool-schemas.expected.json; the model calls only run_code, and system-prompt.expected.md lacks code mode's tools:code-only line"},
		{"both-mode-turn", "hidden-both-no-prompt", true, "tools mode code: no tool-schemas.expected.json; the model calls run_code and no other tool at top level (both mode offers the same run_code; nothing in the recording tells them apart)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), tc.name)
			if err := recording.CopyTree(filepath.Join(root, "transcripts", tc.src), dst); err != nil {
				t.Fatal(err)
			}
			drop := []string{recording.ToolSchemasFile}
			if tc.dropPrompt {
				drop = append(drop, recording.SystemPromptFile)
			}
			for _, f := range drop {
				if err := os.Remove(filepath.Join(dst, f)); err != nil {
					t.Fatal(err)
				}
			}
			r := replay.Replay(context.Background(), dst, replay.Options{})
			if r.Verdict != replay.Match {
				t.Fatalf("%s\n%s", r.Summary(), r.Detail())
			}
			if !slices.Contains(r.Notes, tc.note) {
				t.Errorf("notes %q lack %q", r.Notes, tc.note)
			}
		})
	}
}

// TestLogDirMakesNoParents: LogDir is made when missing, but never its
// parents (a mistyped path must not grow a tree): a LogDir whose parent is
// missing fails the replay, naming the path, and makes nothing.
func TestLogDirMakesNoParents(t *testing.T) {
	isolate.Require(t)
	missing := filepath.Join(t.TempDir(), "missing")
	logs := filepath.Join(missing, "logs")
	rs := replay.Run(context.Background(), dirs(t, "transcripts/fs-read"), replay.RunOptions{Options: replay.Options{LogDir: logs}})
	if len(rs) != 1 || rs[0].Verdict != replay.Failed || !strings.Contains(rs[0].Error, logs) {
		t.Fatalf("results %+v, want one failure naming %s", rs, logs)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("%s was made", missing)
	}
}

// TestServedBashIsRefused: a recording that claims its bash results are
// served from it is refused before anything runs, naming the settings
// file, line and field; the safety stack always runs for real.
func TestServedBashIsRefused(t *testing.T) {
	r := replay.Replay(context.Background(), filepath.Join(root, "testdata/replay/bad/served-bash"), replay.Options{})
	want := `served-bash/dshsim.replay.json:3: field servedTools: servedTools[0] "bash": a served body can never stand in for a tool of the safety stack`
	if r.Verdict != replay.Failed || !strings.HasPrefix(r.Error, want) {
		t.Fatalf("verdict %s, error %q; want an error starting %q", r.Verdict, r.Error, want)
	}
}

// TestGoalToolsMatchUpstreamSchemas: upstream's ACP agent offered the goal
// tools and ralph (its recorded tool-schemas.expected.json and system
// prompt hold them); composed here (profile goal), their schemas,
// descriptions and the one tool:goal and tool:ralph sections are compared
// with the recorded ones and match: no tool is left not modelled.
func TestGoalToolsMatchUpstreamSchemas(t *testing.T) {
	isolate.Require(t)
	dir := copyRecording(t, "text-turn")
	if err := os.WriteFile(filepath.Join(dir, recording.SettingsFile), []byte(`{"profile": "goal"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := replay.Replay(context.Background(), dir, replay.Options{})
	if r.Verdict != replay.Match {
		t.Fatalf("verdict %s: %q", r.Verdict, r.Flags)
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"create_goal, edit, get_goal", "list_agents, ralph, read", "todo_write, update_goal", "tool:jobs, tool:goal, tool:workflow, tool:ralph, tool:subagent"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "not modelled (the stack does not compose them)") {
		t.Errorf("a recorded tool is not modelled:\n%s", notes)
	}
}
