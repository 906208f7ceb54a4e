package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/stack/subagents"
	"github.com/dshsim/dshsim/tools/askuser"
	"github.com/dshsim/dshsim/tools/subagent"
)

// stackApproval is the stack's approval policy for the recording's: a
// composition without the approval plugin (stack.Without.Approval) is
// configured never, which nothing reads.
func stackApproval(a string) string {
	if a == recording.NoApprovalPlugin {
		return stack.ApprovalNever
	}
	return a
}

// unguardedNote says what composition a run without a runtime context of
// front end fe had.
func unguardedNote(fe recording.Frontend) string {
	mounts := "its overlay mounts dsh-bash-local and no sandbox-policy, approval or runtime-context plugins"
	if fe == recording.PythonSDK {
		mounts = "the packaged runtime's composition mounts no sandbox-policy, approval or runtime-context plugins"
	}
	return fmt.Sprintf("%s composition without a boundary (%s): tools run unconfined (danger-full-access), nothing asks, and no runtime context is logged", fe, mounts)
}

// unguarded reports whether the recording's composition had no sandbox,
// approval or runtime context: a headless or JSON-RPC run whose log holds
// no runtime-context message (both examples' default cordis.yml mount
// dsh-bash-local and no policy plugins). The replay composes the same,
// explicitly (stack.Without.Policy).
func unguarded(rec *recording.Recording) bool {
	return (rec.Frontend == recording.Headless || rec.Frontend == recording.JSONRPC || rec.Frontend == recording.PythonSDK) && !rec.HasRuntimeContext()
}

// webNotes say what a web recording's replay compares and how it read the
// log: the session log at the tool boundary, never the UI renders.
func webNotes(rec *recording.Recording) []string {
	if rec.Frontend != recording.Web {
		return nil
	}
	notes := []string{"web: the session side is replayed (the prompts are the log's user messages, the model script its replies) and compared at the tool boundary (tool calls and results, approvals, sandbox/mode and approval/policy) and by where each user's message entered the conversation (the model replies before it); the UI renders (*.expected.md) and the e2e files' browser assertions are out of scope"}
	if line := rec.EarlierShape(); line > 0 {
		notes = append(notes, fmt.Sprintf("web: %s is in the web app's earlier message shape (from line %d: an assistant/message or tool/result with its content and no message), read as upstream's session persistence upgrades it", rec.LogFile, line))
	}
	if n := countSteers(rec); n > 0 {
		notes = append(notes, fmt.Sprintf("web: %d message(s) the user steered into a running turn, each as the e2e file does (typed while the turn runs: a queued row; then the row's Steer), delivered as the step the log enters it after ends, so the turn's next step is the first to see it", n))
	}
	if pol, err := rec.Policy(); err == nil && pol.Default {
		notes = append(notes, fmt.Sprintf("web: the log states no policy (no sandbox/mode, approval/policy or runtime context: it predates them); replayed under the web composition's default, %s with approval %s, as upstream's suite replays it today", pol.Mode, pol.Approval))
	}
	return notes
}

// projectLog projects a log of the recording's session: a web recording's
// at its tool boundary ([projection.ProjectBoundary]), every other one
// whole.
func projectLog(rec *recording.Recording, evs []recording.Event, n projection.Normalizer) ([]projection.Item, projection.Coverage, error) {
	if rec.Frontend == recording.Web {
		return projection.ProjectBoundary(evs, n)
	}
	return projection.ProjectCovered(evs, n)
}

// composedPolicy is the policy the stack is composed with: the recording's,
// except a web session that starts with a /permission switch, composed
// under upstream's default profile (danger-full-access, approval never)
// that its first switch leaves (so the switch writes permission/preset,
// sandbox/mode and approval/policy, as the recording's did).
func composedPolicy(rec *recording.Recording, pol recording.Policy) recording.Policy {
	if rec.SwitchesFirst() {
		return recording.Policy{Mode: string(sandbox.DangerFullAccess), Approval: stack.ApprovalNever}
	}
	return pol
}

// jsonrpcDelegation is the delegation of the JSON-RPC example's default
// overlay (cordis.snapshot.yml over cordis.yml): tool-subagent alone, on
// the spawn provider, with no run_in_background, at upstream's default
// depth 3.
var jsonrpcDelegation = recording.OneShotSubagent{MaxDepth: 3}

// frontendDelegation sets the delegation an overlay composes where it is
// not the default composition: the oneShotSubagent setting's one
// subagent tool (spawn, one-shot), and the workflow tool where it says so;
// without the setting, a JSON-RPC run of no profile has its default
// overlay's ([jsonrpcDelegation]).
func frontendDelegation(rec *recording.Recording, cfg *stack.SubagentsConfig) {
	o := rec.Settings.OneShotSubagent
	if o == nil && rec.Frontend == recording.JSONRPC && rec.Settings.Profile == "" {
		o = &jsonrpcDelegation
	}
	if o == nil {
		return
	}
	depth := o.MaxDepth
	cfg.Instances = []subagent.Instance{{Name: "subagent", Provider: subagents.ProviderSpawn, Background: subagent.OneShot, NoBackground: !o.RunInBackground, MaxDepth: &depth}}
	cfg.Control, cfg.Report, cfg.Workflow = false, false, o.Workflow
}

// frontendChecks are the comparisons a front end's suite makes beyond the
// log, on our log's events (its cwd and session id given): a headless
// run's stream-json records, a JSON-RPC run's notifications and result
// ([streamChecks]), a web session's user messages by their place in the
// conversation ([webPlaces]); ACP's frames are compared by the bridge
// (acpwire), not here.
func frontendChecks(rec *recording.Recording, ours []recording.Event, cwd, id string) (flags, notes []string, err error) {
	if rec.Frontend == recording.Web {
		return webPlaces(rec, ours), nil, nil
	}
	if rec.Stream == nil {
		return nil, nil, nil
	}
	return streamChecks(rec, ours, cwd, id)
}

// webPlaces compares where a web session's user messages entered the
// conversation ([recording.UserPlaces]): each prompt and each steered
// message after as many model replies in our log as in the recording's,
// so a message steered at another point than recorded (or typed as a
// prompt of its own) is a difference even where the tool boundary shows
// none. Their texts are the prompts typed, and not compared again.
func webPlaces(rec *recording.Recording, ours []recording.Event) []string {
	want, got := recording.UserPlaces(rec.Events), recording.UserPlaces(ours)
	var flags []string
	for i, w := range want {
		if i >= len(got) {
			flags = append(flags, fmt.Sprintf("%s:%d: the user's message %q never entered our conversation", rec.LogFile, w.Line, w.Text))
			continue
		}
		if got[i].Replies != w.Replies {
			flags = append(flags, fmt.Sprintf("%s:%d: the user's message %q entered the conversation after %d model replies, ours after %d", rec.LogFile, w.Line, w.Text, w.Replies, got[i].Replies))
		}
	}
	if len(got) > len(want) {
		flags = append(flags, fmt.Sprintf("%s: %d user messages, ours %d", rec.LogFile, len(want), len(got)))
	}
	return flags
}

// streamChecks compares what the client received with our log: the
// session's event records are its events from the prompt's splice on
// (neither client gets what came before), projected and compared as the
// log is; the result's output is the last assistant message's text and,
// headless, its usage the model usage summed over the steps, each step's
// last report. A JSON-RPC run's children's records must be their logs'
// (session.<n>.jsonl, compared with our children's), and its
// session.status values one running and one idle per session that ran.
func streamChecks(rec *recording.Recording, ours []recording.Event, cwd, id string) (flags, notes []string, err error) {
	st := rec.Stream
	file := st.File
	want, _, err := projection.ProjectCovered(st.Events, normalizer(rec, rec.Header.Cwd, rec.Header.ID))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	streamed := fromPromptSplice(ours)
	got, _, err := projection.ProjectCovered(streamed, normalizer(rec, cwd, id))
	if err != nil {
		return nil, nil, fmt.Errorf("our log, as streamed: %w", err)
	}
	c := projection.Compare(want, got)
	if f := firstDiff(file+": the session's event records differ from our log's events from the prompt on", c); f != "" {
		flags = append(flags, f)
	}
	res := streamResult(streamed)
	if res.Output != st.Result.Output {
		flags = append(flags, fmt.Sprintf("%s: field %s: expected %q, got %q", at(st.ResultFile, st.ResultLine), outputField(st), st.Result.Output, res.Output))
	}
	if st.ResultFile == recording.StreamFile && !maps.Equal(res.Usage, st.Result.Usage) {
		flags = append(flags, fmt.Sprintf("%s: field usage: expected %s, got %s", at(st.ResultFile, st.ResultLine), showUsage(st.Result.Usage), showUsage(res.Usage)))
	}
	switch rec.Frontend {
	case recording.JSONRPC:
	case recording.PythonSDK:
		wantN, _, err := projection.ProjectCovered(st.Notified, normalizer(rec, rec.Header.Cwd, rec.Header.ID))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: notifications: %w", file, err)
		}
		if f := firstDiff(file+": the session's session.event notifications differ from our log's events from the prompt on", projection.Compare(wantN, got)); f != "" {
			flags = append(flags, f)
		}
	default:
		notes = append(notes, fmt.Sprintf("%s: compared %d session_event records (%d projected events, from the prompt's splice on) and the result record (output, usage); not compared: the records' sessionId (a token) and each event's seq and time", file, len(st.Events), c.Total))
		return flags, notes, nil
	}
	cf, err := childRecordChecks(rec)
	if err != nil {
		return nil, nil, err
	}
	flags = append(flags, cf...)
	flags = append(flags, statusChecks(rec, ours)...)
	notes = append(notes, sdkNote(rec, c.Total))
	return flags, notes, nil
}

// sdkNote says what an SDK run's comparison compared (total: the
// projected events of the session's records).
func sdkNote(rec *recording.Recording, total int) string {
	st := rec.Stream
	if rec.Frontend == recording.PythonSDK {
		return fmt.Sprintf("%s: compared the session's %d events and its %d session.event notifications (%d projected events each, from the prompt's splice on), %d child session(s)' notifications (with their logs), %d session.status values (one running and one idle per session that ran) and final_response; not compared: the %d subagent.* notifications (the children's logs are), session_id and the sessionIds (tokens), session_root (a path of the run), and each event's seq and time", st.File, len(st.Events), len(st.Notified), total, len(st.Children), len(st.Statuses), st.Subagents)
	}
	return fmt.Sprintf("%s: compared the session's %d session.event records (%d projected events, from the prompt's splice on), %d child session(s)' records (with their logs), %d session.status values (one running and one idle per session that ran) and %s's finalResponse; not compared: the %d subagent.* notifications (the children's logs are), the sessionIds (tokens) and each event's seq and time", st.File, len(st.Events), total, len(st.Children), len(st.Statuses), recording.ResultExpectedFile, st.Subagents)
}

// firstDiff is c's first difference after what, "" when c matched.
func firstDiff(what string, c projection.Comparison) string {
	if p := c.First(); p != nil {
		s := fmt.Sprintf("%s: turn %d, %s", what, p.Turn, p.Label())
		if len(p.Diffs) > 0 {
			s += ": " + p.Diffs[0].String()
		}
		return s
	}
	if c.Matched != c.Total {
		return fmt.Sprintf("%s: %d of %d projected events matched", what, c.Matched, c.Total)
	}
	return ""
}

// at is file:line (file alone for line 0).
func at(file string, line int) string {
	if line == 0 {
		return file
	}
	return fmt.Sprintf("%s:%d", file, line)
}

// outputField names the result's text field.
func outputField(st *recording.Stream) string {
	switch st.ResultFile {
	case recording.ResultExpectedFile:
		return "finalResponse"
	case recording.ResultFile:
		return "final_response"
	}
	return "output"
}

// childRecordChecks compares each child's records with its recorded log
// (from its first streamed event on).
func childRecordChecks(rec *recording.Recording) ([]string, error) {
	var flags []string
	st := rec.Stream
	if len(st.Children) != len(rec.Children) {
		return []string{fmt.Sprintf("%s: records of %d child session(s), the recording has %d child log(s)", st.File, len(st.Children), len(rec.Children))}, nil
	}
	for i, evs := range st.Children {
		c := rec.Children[i]
		norm := normalizer(rec, c.Header.Cwd, c.Header.ID)
		want, _, err := projection.ProjectCovered(evs, norm)
		if err != nil {
			return nil, fmt.Errorf("%s: child %d: %w", st.File, i+1, err)
		}
		got, _, err := projection.ProjectCovered(fromSeq(c.Events, evs[0].Seq), norm)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.File, err)
		}
		if f := firstDiff(fmt.Sprintf("%s: child %d's records differ from %s", st.File, i+1, c.File), projection.Compare(want, got)); f != "" {
			flags = append(flags, f)
		}
	}
	return flags, nil
}

// fromSeq are the events from seq on.
func fromSeq(evs []recording.Event, seq int64) []recording.Event {
	for i, e := range evs {
		if e.Seq >= seq {
			return evs[i:]
		}
	}
	return nil
}

// statusChecks checks the recording's session.status values against the
// busy periods of our session and its recorded children: one running and
// one idle each (the sessions' ids are one token, so counts are compared).
func statusChecks(rec *recording.Recording, ours []recording.Event) []string {
	periods := busyPeriods(ours)
	for _, c := range rec.Children {
		periods += busyPeriods(c.Events)
	}
	var running, idle int
	for _, s := range rec.Stream.Statuses {
		if s == "running" {
			running++
		} else {
			idle++
		}
	}
	if running != periods || idle != periods {
		return []string{fmt.Sprintf("%s: %d running and %d idle session.status values, for %d busy period(s) of our session and its children", rec.Stream.File, running, idle, periods)}
	}
	return nil
}

// busyPeriods is 1 for a session that ran a turn, else 0: an SDK run
// drives one prompt, which the session runs from running to idle (a
// child's turns run back to back on its parent's call).
func busyPeriods(evs []recording.Event) int {
	for _, e := range evs {
		if e.Type == session.KindTurnStart {
			return 1
		}
	}
	return 0
}

// fromPromptSplice are the events from the first agent/inbox/spliced that
// queues a user's prompt on (all of them when there is none).
func fromPromptSplice(evs []recording.Event) []recording.Event {
	for i, e := range evs {
		if e.Type != session.KindInboxSpliced {
			continue
		}
		var d struct {
			Inserted []struct {
				Source struct {
					Kind string `json:"kind"`
				} `json:"source"`
			} `json:"inserted"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			continue
		}
		for _, m := range d.Inserted {
			if m.Source.Kind == "user" {
				return evs[i:]
			}
		}
	}
	return evs
}

// streamResult is the result record runFixtureTurn writes for events:
// the last assistant message's text (its text blocks joined; a message
// without one keeps the earlier text) and the usage summed over the
// steps, each step's last report (a usage chunk, or the message's usage).
func streamResult(evs []recording.Event) recording.StreamResult {
	var out recording.StreamResult
	var order []string
	byStep := map[string]map[string]int{}
	set := func(turn, step int, u map[string]int) {
		k := fmt.Sprintf("%d/%d", turn, step)
		if _, ok := byStep[k]; !ok {
			order = append(order, k)
		}
		byStep[k] = u
	}
	for _, e := range evs {
		switch e.Type {
		case session.KindAssistantChunk:
			var d struct {
				Turn, Step int
				Chunk      struct {
					Type  string         `json:"type"`
					Usage map[string]int `json:"usage"`
				} `json:"chunk"`
			}
			if json.Unmarshal(e.Data, &d) == nil && d.Chunk.Type == "usage" {
				set(d.Turn, d.Step, d.Chunk.Usage)
			}
		case session.KindAssistantMessage:
			var d struct {
				Turn, Step int
				Message    struct {
					Content []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"message"`
				Usage map[string]int `json:"usage"`
			}
			if json.Unmarshal(e.Data, &d) != nil {
				continue
			}
			var texts []string
			for _, b := range d.Message.Content {
				if b.Type == "text" {
					texts = append(texts, b.Text)
				}
			}
			if len(texts) > 0 {
				out.Output = strings.Join(texts, "")
			}
			if d.Usage != nil {
				set(d.Turn, d.Step, d.Usage)
			}
		}
	}
	for _, k := range order {
		out.Usage = addUsage(out.Usage, byStep[k])
	}
	return out
}

// addUsage is upstream's sum of two usage reports: input and output
// tokens always, the cache and reasoning counts where either has them.
func addUsage(total, step map[string]int) map[string]int {
	next := map[string]int{"inputTokens": total["inputTokens"] + step["inputTokens"], "outputTokens": total["outputTokens"] + step["outputTokens"]}
	for _, k := range []string{"cacheReadTokens", "cacheWriteTokens", "reasoningTokens"} {
		_, a := total[k]
		_, b := step[k]
		if a || b {
			next[k] = total[k] + step[k]
		}
	}
	return next
}

// showUsage renders a usage report for a flag.
func showUsage(u map[string]int) string {
	if u == nil {
		return "none"
	}
	b, _ := json.Marshal(u)
	return string(b)
}

// resumeSeeded writes the events upstream's test file seeded (the log's
// first resumeSeed events, as recorded), then resumes the session as
// upstream's agents.resume does: the closers of a turn the seed left open
// (session.InterruptedTurnClosers: a call without a result gets an
// unknown or not-started outcome) and session/end-seed.
func resumeSeeded(rec *recording.Recording, log *session.Log) error {
	for _, e := range rec.Events[:rec.Settings.ResumeSeed] {
		o := session.AppendOptions{}
		if len(e.SurfaceOp) > 0 {
			o.SurfaceOp = e.SurfaceOp
		}
		if _, err := log.AppendWith(e.Type, e.Data, o); err != nil {
			return err
		}
	}
	events, err := log.Events()
	if err != nil {
		return err
	}
	closers, err := session.InterruptedTurnClosers(events)
	if err != nil {
		return err
	}
	for _, c := range closers {
		o := session.AppendOptions{SourceEventSeqs: c.SourceEventSeqs}
		if c.SurfaceOp != "" {
			o.SurfaceOp = c.SurfaceOp
		}
		if _, err := log.AppendWith(c.Type, c.Data, o); err != nil {
			return err
		}
	}
	_, err = log.Append(session.KindEndSeed, struct{}{})
	return err
}

// seedTitle notes a resumed seed's user message e with the titles.
func seedTitle(t *titles, e session.Event) {
	var d struct {
		Content []pipeline.Block `json:"content"`
		Source  struct {
			Kind string `json:"kind"`
		} `json:"source"`
	}
	if json.Unmarshal(e.Data, &d) == nil && d.Source.Kind == "user" {
		t.userEntered(e.Seq, d.Content)
	}
}

// webQuestions is the web UI answering ask_user_question as the
// scenario's e2e file does (the uiQuestions setting): each question gets
// the answer of its id, and a question without one fails the call. The
// web composition mounts the tool (its user-questions row) with the UI
// as the answerer.
func webQuestions(given []recording.QuestionAnswer) askuser.Answerer {
	return func(_ context.Context, qs []askuser.Question) ([]askuser.Answer, error) {
		out := make([]askuser.Answer, 0, len(qs))
		for _, q := range qs {
			i := slices.IndexFunc(given, func(a recording.QuestionAnswer) bool { return a.ID == q.ID })
			if i < 0 {
				return nil, fmt.Errorf("the web UI has no answer for question %q (the uiQuestions setting gives the e2e file's)", q.ID)
			}
			out = append(out, askuser.Answer{ID: q.ID, Selected: given[i].Selected, Custom: given[i].Custom})
		}
		return out, nil
	}
}

// compare compares the recording's projection with ours, got (a web
// recording's as [webReadMeta] says), and says what it left out ("" for
// nothing).
func (p *prepared) compare(got []projection.Item) (projection.Comparison, string) {
	got, note := webReadMeta(p.rec, p.expected, got)
	return projection.Compare(p.expected, got), note
}

// webReadMeta leaves the meta out of our read results where a web
// recording's read result has none: the web app's read wrote no
// presentation meta when the recording was made, and rc.8's read writes
// the window its UI card shows (path, offset, lines, totalLines), never
// what the model sees. Only read's results, only where the recording's
// lacks meta: any other result's meta, and a read's the recording has,
// are compared. It returns the items to compare and a note naming how
// many results it left meta out of ("" for none).
func webReadMeta(rec *recording.Recording, expected, got []projection.Item) ([]projection.Item, string) {
	if rec.Frontend != recording.Web {
		return got, ""
	}
	reads, bare := map[any]bool{}, map[any]bool{}
	for _, it := range expected {
		switch {
		case it.Kind == projection.KindCall && it.Fields["name"] == "read":
			reads[it.Fields["callId"]] = true
		case it.Kind == projection.KindResult && it.Fields["meta"] == nil:
			bare[it.Fields["callId"]] = true
		}
	}
	out, n := make([]projection.Item, len(got)), 0
	for i, it := range got {
		out[i] = it
		id := it.Fields["callId"]
		if it.Kind != projection.KindResult || !reads[id] || !bare[id] || it.Fields["meta"] == nil {
			continue
		}
		out[i].Fields = maps.Clone(it.Fields)
		delete(out[i].Fields, "meta")
		n++
	}
	if n == 0 {
		return got, ""
	}
	return out, fmt.Sprintf("web: the meta of %d read result(s) not compared: the recording's have none (the web app's read wrote no presentation meta when it was recorded; ours, as rc.8's, writes the window the UI's card shows, which the model never sees)", n)
}
