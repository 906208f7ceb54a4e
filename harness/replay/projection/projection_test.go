package projection

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/recording/recordingtest"
)

func TestNormalizerString(t *testing.T) {
	n := Normalizer{Cwds: []string{"/tmp/dsh-replay-ws-123", "/private/tmp/dsh-replay-ws-123"}, SessionIDs: []string{"run-id"}}
	tests := []struct{ name, in, want string }{
		{name: "cwd becomes a placeholder", in: "<path>/tmp/dsh-replay-ws-123/a.txt</path>", want: "<path>{{cwd}}/a.txt</path>"},
		{name: "longer alias first", in: "/private/tmp/dsh-replay-ws-123/x", want: "{{cwd}}/x"},
		{name: "a longer sibling name is not the cwd", in: "/tmp/dsh-replay-ws-1234/x", want: "/tmp/dsh-replay-ws-1234/x"},
		{name: "quoted cwd at end of sentence", in: `workspace: "/tmp/dsh-replay-ws-123".`, want: `workspace: "{{cwd}}".`},
		{name: "spill locator under the fixed root", in: "stored at: /tmp/dsh-acp-snap-ee77dff02/session-5e53dc8acfe4/2ce9d7a31a38-bash.txt. Use read", want: "stored at: {{spillLocator:bash.txt}}. Use read"},
		{name: "spill locator under the cwd", in: "/tmp/dsh-replay-ws-123/.spill/session-5e53dc8acfe4/2ce9d7a31a38-bash.txt", want: "{{spillLocator:bash.txt}}"},
		{name: "uuid anywhere", in: "id 7e4e0dfa-6ff0-4037-b519-297a1e7f11cf.", want: "id {{sessionId}}."},
		{name: "run session id", in: "run-id", want: "{{sessionId}}"},
		{name: "an event read's time and omitted bytes",
			in:   "Session run-id — Read\nTarget event seq 5:\n```json\n{\n  \"type\": \"user/message\",\n  \"seq\": 5,\n  \"time\": 1785987646184,\n  \"data\": {\n    \"time\": 12,\n    \"t\": \"suffix\n  \"time\": 9,\n\n(Omitted 782 bytes. Full formatted result stored at: x)",
			want: "Session {{sessionId}} — Read\nTarget event seq 5:\n```json\n{\n  \"type\": \"user/message\",\n  \"seq\": 5,\n  \"time\": {{eventTime}},\n  \"data\": {\n    \"time\": 12,\n    \"t\": \"suffix\n  \"time\": {{eventTime}},\n\n(Omitted {{eventOmittedBytes}} bytes. Full formatted result stored at: x)"},
		{name: "a time line outside an event read stays", in: "x\n  \"time\": 17,\n\n(Omitted 3 bytes.", want: "x\n  \"time\": 17,\n\n(Omitted 3 bytes."},
		{name: "the region ends at the closing fence", in: "Session a — t\nTarget event seq 1:\n```json\n{\n  \"time\": 1,\n}\n```\n\nAfter:\n  \"time\": 2,", want: "Session a — t\nTarget event seq 1:\n```json\n{\n  \"time\": {{eventTime}},\n}\n```\n\nAfter:\n  \"time\": 2,"},
		{name: "upstream's full-output path", in: "y\n[output truncated; full output: /tmp/dsh-subprocess-zej5ai/dsh-subprocess-16759-1-e2e972163863-stdout.log]", want: "y\n[output truncated; full output: {{subprocessOutput:stdout}}]"},
		{name: "another run's full-output path, stderr", in: "/tmp/dsh-subprocess-Ab12Cd/dsh-subprocess-4242-17-0a1b2c3d4e5f-stderr.log, x", want: "{{subprocessOutput:stderr}}, x"},
		{name: "a full-output path of another shape stays", in: "/tmp/dsh-subprocess-2067353002/dsh-spawn-3062451859.stdout", want: "/tmp/dsh-subprocess-2067353002/dsh-spawn-3062451859.stdout"},
		{name: "a full-output path without its counter stays", in: "/tmp/dsh-subprocess-zej5ai/dsh-subprocess-16759-e2e972163863-stdout.log", want: "/tmp/dsh-subprocess-zej5ai/dsh-subprocess-16759-e2e972163863-stdout.log"},
		{name: "model call ids stay", in: "call_00_d0sAHpJ9mYOJi0z7KNy30441", want: "call_00_d0sAHpJ9mYOJi0z7KNy30441"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := n.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestNormalizerEventTimes: with EventTimes, exactly toISOString's form
// becomes {{eventTime}}; without it, and for other time spellings, nothing.
func TestNormalizerEventTimes(t *testing.T) {
	hit := "1. seq 16 | tool/result | current | 2026-12-02T23:12:01.765Z\n   Snippet: … | 2026-12-02T23:12:01.716Z Snippet: x"
	tests := []struct {
		name, in, want string
		on             bool
	}{
		{"hit lines and snippets", hit, "1. seq 16 | tool/result | current | {{eventTime}}\n   Snippet: … | {{eventTime}} Snippet: x", true},
		{"off by default", hit, hit, false},
		{"no milliseconds", "2026-12-02T23:12:01Z", "2026-12-02T23:12:01Z", true},
		{"an offset instead of Z", "2026-12-02T23:12:01.765+00:00", "2026-12-02T23:12:01.765+00:00", true},
		{"microseconds", "2026-12-02T23:12:01.765432Z", "2026-12-02T23:12:01.765432Z", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := Normalizer{EventTimes: tc.on}
			if got := n.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func item(kind string, turn int, fields string) Item {
	var f map[string]any
	if err := json.Unmarshal([]byte(fields), &f); err != nil {
		panic(err)
	}
	return Item{Turn: turn, Kind: kind, Fields: f}
}

func TestCompare(t *testing.T) {
	call := item(KindCall, 1, `{"name":"bash","callId":"c1","arguments":{"command":"echo hi","description":"x"}}`)
	res := item(KindResult, 1, `{"callId":"c1","text":"hi\n","isError":false,"meta":{"diffs":[{"path":"a","newText":"x"}]}}`)
	end := item(KindTurnEnd, 1, `{"reason":{"kind":"completed"}}`)
	tests := []struct {
		name       string
		exp, got   []Item
		matched    int
		mismatched int
		firstPaths []string
	}{
		{name: "equal projections match", exp: []Item{call, res, end}, got: []Item{call, res, end}, matched: 3},
		{name: "argument key order does not matter", exp: []Item{call},
			got:     []Item{item(KindCall, 1, `{"arguments":{"description":"x","command":"echo hi"},"callId":"c1","name":"bash"}`)},
			matched: 1},
		{name: "different result text names the field", exp: []Item{call, res, end},
			got:     []Item{call, item(KindResult, 1, `{"callId":"c1","text":"ho\n","isError":false,"meta":{"diffs":[{"path":"a","newText":"x"}]}}`), end},
			matched: 2, mismatched: 1, firstPaths: []string{"text"}},
		{name: "nested meta difference has a path", exp: []Item{res},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"hi\n","isError":false,"meta":{"diffs":[{"path":"a","newText":"y"}]}}`)},
			mismatched: 1, firstPaths: []string{"meta.diffs[0].newText"}},
		{name: "missing error field is reported", exp: []Item{item(KindResult, 1, `{"callId":"c1","text":"t","isError":true,"error":{"name":"FsError","code":"FS_NOT_OBSERVED"}}`)},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"t","isError":true}`)},
			mismatched: 1, firstPaths: []string{"error"}},
		{name: "missing approval is a mismatch at its position", exp: []Item{call, item(KindAsked, 1, `{"toolName":"bash","callId":"c1","reason":"r"}`), res},
			got:     []Item{call, res},
			matched: 1, mismatched: 2, firstPaths: []string{"kind"}},
		{name: "extra item in the replay", exp: []Item{call}, got: []Item{call, end},
			matched: 1, mismatched: 1, firstPaths: []string{"(item)"}},
		// A text must equal the recorded one: a prefix, a suffix or a longer
		// text of either side is a mismatch (a comparator that took a prefix
		// for a match passed every replay test).
		{name: "a replayed text that is a prefix of the recorded one", exp: []Item{res},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"hi","isError":false,"meta":{"diffs":[{"path":"a","newText":"x"}]}}`)},
			mismatched: 1, firstPaths: []string{"text"}},
		{name: "an empty replayed text", exp: []Item{res},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"","isError":false,"meta":{"diffs":[{"path":"a","newText":"x"}]}}`)},
			mismatched: 1, firstPaths: []string{"text"}},
		{name: "a replayed text that the recorded one is a prefix of", exp: []Item{res},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"hi\nmore\n","isError":false,"meta":{"diffs":[{"path":"a","newText":"x"}]}}`)},
			mismatched: 1, firstPaths: []string{"text"}},
		{name: "a replayed text that is a suffix of the recorded one", exp: []Item{res},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"i\n","isError":false,"meta":{"diffs":[{"path":"a","newText":"x"}]}}`)},
			mismatched: 1, firstPaths: []string{"text"}},
		{name: "a prefix in a nested string", exp: []Item{res},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"hi\n","isError":false,"meta":{"diffs":[{"path":"a","newText":""}]}}`)},
			mismatched: 1, firstPaths: []string{"meta.diffs[0].newText"}},
		{name: "two results in the other order", exp: []Item{res, item(KindResult, 1, `{"callId":"c2","text":"ho\n","isError":false}`)},
			got:        []Item{item(KindResult, 1, `{"callId":"c2","text":"ho\n","isError":false}`), res},
			mismatched: 2, firstPaths: []string{"callId", "meta", "text"}},
		{name: "a call and its result in the other order", exp: []Item{call, res}, got: []Item{res, call},
			mismatched: 2, firstPaths: []string{"kind"}},
		{name: "a field missing in the replay", exp: []Item{res},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"hi\n","meta":{"diffs":[{"path":"a","newText":"x"}]}}`)},
			mismatched: 1, firstPaths: []string{"isError"}},
		{name: "a nested field missing in the replay", exp: []Item{res},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"hi\n","isError":false,"meta":{"diffs":[{"path":"a"}]}}`)},
			mismatched: 1, firstPaths: []string{"meta.diffs[0].newText"}},
		// A field only the replay has is a difference as much as one only
		// the recording has: a recording with a field deleted does not match.
		{name: "a field only in the replay", exp: []Item{res},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"hi\n","isError":false,"source":"x","meta":{"diffs":[{"path":"a","newText":"x"}]}}`)},
			mismatched: 1, firstPaths: []string{"source"}},
		{name: "a nested field only in the replay", exp: []Item{res},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"hi\n","isError":false,"meta":{"diffs":[{"path":"a","newText":"x","oldText":""}]}}`)},
			mismatched: 1, firstPaths: []string{"meta.diffs[0].oldText"}},
		{name: "an element only in the replay", exp: []Item{res},
			got:        []Item{item(KindResult, 1, `{"callId":"c1","text":"hi\n","isError":false,"meta":{"diffs":[{"path":"a","newText":"x"},{"path":"b"}]}}`)},
			mismatched: 1, firstPaths: []string{"meta.diffs[1]"}},
		{name: "items pair per turn", exp: []Item{call, item(KindTurnEnd, 2, `{"reason":{"kind":"completed"}}`)},
			got:     []Item{item(KindTurnEnd, 2, `{"reason":{"kind":"completed"}}`)},
			matched: 1, mismatched: 1, firstPaths: []string{"(item)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(tc.exp, tc.got)
			if c.Matched != tc.matched || c.Mismatched != tc.mismatched || c.Total != len(tc.exp) {
				t.Fatalf("matched %d mismatched %d total %d, want %d %d %d", c.Matched, c.Mismatched, c.Total, tc.matched, tc.mismatched, len(tc.exp))
			}
			first := c.First()
			if tc.firstPaths == nil {
				if first != nil {
					t.Fatalf("unexpected mismatch %+v", first)
				}
				return
			}
			var paths []string
			for _, d := range first.Diffs {
				paths = append(paths, d.Path)
			}
			if strings.Join(paths, ",") != strings.Join(tc.firstPaths, ",") {
				t.Errorf("first mismatch paths %v, want %v", paths, tc.firstPaths)
			}
		})
	}
}

// TestFullOutputPathHidesOnlyThePath: two results that name different
// full-output files match; a different tail, a byte more or less before the
// path, text after it, or the other stream do not.
func TestFullOutputPathHidesOnlyThePath(t *testing.T) {
	const (
		upstream = "/tmp/dsh-subprocess-zej5ai/dsh-subprocess-16759-1-e2e972163863-stdout.log"
		ours     = "/tmp/dsh-subprocess-Q9xk2B/dsh-subprocess-3062451-12-9f00aa11bb22-stdout.log"
	)
	norm := func(text string) Item {
		return Item{Turn: 1, Kind: KindResult, Fields: map[string]any{"callId": "c1", "text": Normalizer{}.String(text), "isError": false}}
	}
	exp := norm("yyyy\nTAIL\n[output truncated; full output: " + upstream + "]")
	tests := []struct {
		name  string
		got   string
		match bool
	}{
		{"another run's path", "yyyy\nTAIL\n[output truncated; full output: " + ours + "]", true},
		{"a different tail", "yyyz\nTAIL\n[output truncated; full output: " + ours + "]", false},
		{"a longer tail", "yyyyy\nTAIL\n[output truncated; full output: " + ours + "]", false},
		{"text after the path", "yyyy\nTAIL\n[output truncated; full output: " + ours + "]\n[exit code: 1]", false},
		{"the stderr file", "yyyy\nTAIL\n[output truncated; full output: " + strings.Replace(ours, "-stdout.log", "-stderr.log", 1) + "]", false},
		{"our old shape", "yyyy\nTAIL\n[output truncated; full output: /tmp/dsh-subprocess-2067353002/dsh-spawn-3062451859.stdout]", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if c := Compare([]Item{exp}, []Item{norm(tc.got)}); (c.Matched == 1) != tc.match {
				t.Errorf("match = %v, want %v (%+v)", c.Matched == 1, tc.match, c.First())
			}
		})
	}
}

// projectTranscript is the projection of the upstream recording
// transcripts/<name>, normalised by its own cwd and session id.
func projectTranscript(t *testing.T, name string) []Item {
	t.Helper()
	r := recordingtest.Load(t, filepath.Join("../../../transcripts", name))
	items, err := Project(r.Events, WithCwd(r.Header.Cwd, r.Header.ID))
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func TestProjectUpstreamRecording(t *testing.T) {
	items := projectTranscript(t, "fs-policy-reject")
	var kinds []string
	for _, it := range items {
		kinds = append(kinds, it.Kind)
	}
	// the prompt is queued for the turn (inbox/spliced), claimed at its
	// start (inbox/spliced), entered (prompt), then the step runs
	want := "inbox/spliced,inbox/spliced,prompt,runtime-context,session/title,tool/call,tool/result,tool/call,tool/result,tool/call,tool/result,turn/end"
	if strings.Join(kinds, ",") != want {
		t.Fatalf("kinds %v, want %s", kinds, want)
	}
	first := items[6].Fields
	if first["text"] != "Error: edit requires reading \"{{cwd}}/settings.txt\" first — read the file, then retry" || first["isError"] != true {
		t.Errorf("first result %v", first)
	}
	if e, _ := first["error"].(map[string]any); e["code"] != "FS_NOT_OBSERVED" {
		t.Errorf("first result error %v", first["error"])
	}
	if args, _ := items[5].Fields["arguments"].(map[string]any); args["old_string"] != "blue" {
		t.Errorf("arguments are not parsed JSON: %#v", items[5].Fields["arguments"])
	}
}

// The hook events of a recording are projected with their fields, durationMs
// normalised to 0.
func TestProjectHookEvents(t *testing.T) {
	items := projectTranscript(t, "hook-cc-posttool-block")
	var got []map[string]any
	for _, it := range items {
		if it.Kind == KindInvoked || it.Kind == KindHook {
			got = append(got, it.Fields)
		}
	}
	want := []map[string]any{
		{"point": "PostToolUse", "dialect": "claude-code", "handlerId": "claude-code:PostToolUse:1", "matcher": "bash"},
		{"point": "PostToolUse", "handlerId": "claude-code:PostToolUse:1", "decision": "block", "exitCode": 2.0, "stderrSummary": "tool output rejected by policy: retry once", "durationMs": 0.0},
		{"point": "PostToolUse", "dialect": "claude-code", "handlerId": "claude-code:PostToolUse:2", "matcher": "bash"},
		{"point": "PostToolUse", "handlerId": "claude-code:PostToolUse:2", "decision": "pass", "exitCode": 0.0, "durationMs": 0.0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hook items (-want +got):\n%s", diff)
	}
	if l := items[6].Label(); l != "hook/invoked claude-code:PostToolUse:1" {
		t.Errorf("label %q", l)
	}
}

// A hook's context message is projected with its plugin; the runtime
// context without one.
func TestProjectPluginMessages(t *testing.T) {
	msg := func(plugin string) recording.Event {
		return recording.Event{Type: "user/message", Data: []byte(`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"source":{"kind":"plugin","plugin":"` + plugin + `"},"role":"user","id":"x"}`)}
	}
	items, err := Project([]recording.Event{msg("@deepseek-ai/dsh-system-prompt"), msg("hooks-codex")}, Normalizer{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]map[string]any{{"text": "ab"}, {"text": "ab", "plugin": "hooks-codex"}}, []map[string]any{items[0].Fields, items[1].Fields}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if l0, l1 := items[0].Label(), items[1].Label(); l0 != "runtime-context" || l1 != "context message from hooks-codex" {
		t.Errorf("labels %q, %q", l0, l1)
	}
}

// The turn-level events are projected: titles, the title model's request,
// retries, workspace instructions with their source, a canceled inbox
// splice and a compaction's surfaceOp; a changed field of any of them is a
// difference.
func TestProjectTurnEvents(t *testing.T) {
	tests := []struct {
		recording, kind, field string
		want                   any
	}{
		{"session-title-after-turn", KindTitle, "title", "Reply with exactly TITLE_DONE. Do"},
		{"session-title-after-turn", KindTitleRequest, "maxTokens", 32.0},
		{"empty-response-retry", KindRetry, "policyKey", `["normal",2,["EMPTY_RESPONSE","RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"],1,1,0]`},
		{"empty-response-retry", KindRetryStarted, "retryId", "{{sessionId}}"},
		{"agent-instructions", KindCanceled, "target", "next-step"},
		{"agent-instructions", KindContext, "compactionId", "workspace-context-fixture"},
		{"agent-instructions", KindInstructions, "source.baselineIdentity", `{"projectRoot":"","projectRootMarkers":[".dsh-project"],"maxBytes":65536,"maxSourceBytes":1048576,"instructionFileCandidates":["AGENTS.md","CLAUDE.md"],"localInstructionFileCandidates":["AGENTS.local.md","CLAUDE.local.md"]}`},
		{"error-finish", KindTurnEnd, "reason.error.code", "AUTH"},
		{goalTools, KindGoal, "operation", "create"},
		{goalTools, KindGoal, "goal.id", "goal-{{sessionId}}"},
		{goalTools, KindGoal, "goal.maxGoalRounds", 7.0},
		{goalTools, KindGoal, "roundsStarted", 0.0},
		{goalWrapup, KindRound, "source.round", 1.0},
		{goalWrapup, KindRound, "source.goalId", "goal-{{sessionId}}"},
		{goalWrapup, KindContext, "summary", "complete: Finish the ACP goal wrap-up snapshot proof"},
		{compactionRecovery, KindCompactionStart, "compactionId", "{{sessionId}}"},
		{compactionRecovery, KindCompactionStart, "turn", 1.0},
		{compactionRecovery, KindCompactionSummary, "shadowedRange.start", 4.0},
		{compactionRecovery, KindCompactionSummary, "shadowedTokenCount", 266.0},
		{compactionRecovery, KindCompactionSummary, "maxTokens", 32.0},
		{compactionRecovery, KindCompactionSummary, "usage.outputTokens", 4.0},
		{compactionRecovery, KindCompactionSummary, "llmStreamCall", true},
		{compactionRecovery, KindContext, "surfaceOp.end", 4.0},
		{compactionRecovery, KindContext, "plugin", "compact"},
		{compactionRecovery, KindCompactionEnd, "turn", 1.0},
	}
	for _, tc := range tests {
		t.Run(tc.recording+" "+tc.kind, func(t *testing.T) {
			items := projectTranscript(t, tc.recording)
			i := slices.IndexFunc(items, func(it Item) bool { return it.Kind == tc.kind && hasPath(it.Fields, strings.Split(tc.field, ".")) })
			if i < 0 {
				t.Fatalf("no %s item with %s", tc.kind, tc.field)
			}
			var v any = items[i].Fields
			for _, k := range strings.Split(tc.field, ".") {
				v = v.(map[string]any)[k]
			}
			if !cmp.Equal(v, tc.want) {
				t.Fatalf("%s: %#v, want %#v", tc.field, v, tc.want)
			}
			changed := slices.Clone(items)
			changed[i] = Item{Turn: items[i].Turn, Kind: items[i].Kind, Fields: setPath(items[i].Fields, strings.Split(tc.field, "."), "changed")}
			if c := Compare(items, changed); c.Mismatched != 1 || c.First().Diffs[0].Path != tc.field {
				t.Errorf("a changed %s: %+v", tc.field, c.First())
			}
		})
	}
}

// goalTools is the headless recording of the goal tools.
const goalTools = "frontends/examples/headless-agent/tests/snapshots/goal-tools"

// compactionRecovery is the headless recording of a compaction after a
// context overflow.
const compactionRecovery = "frontends/examples/headless-agent/tests/snapshots/compaction-recovery"

// goalWrapup is the goal suite's recording of a round that completes.
const goalWrapup = "frontends/examples/acp-agent/tests/goal-snapshots/goal-wrapup"

// TestFieldsLeftOut: fields of the run's own, left out of their items: a
// goal/change's times (the run's clock) and a compaction/summary's
// provider and model (the summary call's route, the replay's own model's,
// as a request's route is); the rest stays.
func TestFieldsLeftOut(t *testing.T) {
	for _, tc := range []struct {
		recording, kind string
		left            []string
		kept            string
	}{
		{goalTools, KindGoal, []string{"createdAt", "updatedAt"}, "goal"},
		{compactionRecovery, KindCompactionSummary, []string{"provider", "model"}, "summary"},
	} {
		items := projectTranscript(t, tc.recording)
		i := slices.IndexFunc(items, func(it Item) bool { return it.Kind == tc.kind })
		if i < 0 {
			t.Fatalf("no %s item", tc.kind)
		}
		for _, k := range tc.left {
			if _, ok := items[i].Fields[k]; ok {
				t.Errorf("%s item holds %s", tc.kind, k)
			}
		}
		if _, ok := items[i].Fields[tc.kept]; !ok {
			t.Errorf("%s item lacks %s", tc.kind, tc.kept)
		}
	}
}

// setPath returns a copy of m with the value at path set to v.
func setPath(m map[string]any, path []string, v any) map[string]any {
	out := maps.Clone(m)
	if len(path) == 1 {
		out[path[0]] = v
		return out
	}
	out[path[0]] = setPath(m[path[0]].(map[string]any), path[1:], v)
	return out
}

// hasPath reports whether m holds a value at path.
func hasPath(m map[string]any, path []string) bool {
	v, ok := m[path[0]]
	if !ok || len(path) == 1 {
		return ok
	}
	sub, ok := v.(map[string]any)
	return ok && hasPath(sub, path[1:])
}

// TestReplaceWhere: at is offered each occurrence with the rest of the
// string since the previous one; the occurrences it refuses stay.
func TestReplaceWhere(t *testing.T) {
	var offered []string
	got := ReplaceWhere("ab-ab.ab", "ab", "X", func(rest string, i, end int) bool {
		offered = append(offered, rest[i:])
		return end == len(rest) || rest[end] != '-'
	})
	if want := "ab-X.X"; got != want {
		t.Errorf("ReplaceWhere = %q, want %q", got, want)
	}
	if want := []string{"ab-ab.ab", "ab.ab", "ab"}; !slices.Equal(offered, want) {
		t.Errorf("offered %q, want %q", offered, want)
	}
}
