package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/jobs"
)

// Model is what the driver calls for each step's model request: the
// recording's script (a replay or a refresh) or a live model (dsh-record).
// The driver logs what it gets (every chunk as assistant/chunk as it comes,
// then the assistant message), decides retries from Info's policy and runs
// the tool calls.
type Model interface {
	// Info names the model in the log and gives its retry policy.
	Info() ModelInfo
	// Call answers one request: it hands each chunk to emit as the model
	// streams it (upstream's JSON of the chunk) and returns the finished
	// reply. A failed call is a reply whose Finish is "error" with its
	// Failure (after its error finish chunk was emitted); a returned error
	// stops the session (errScriptExhausted: no reply is left).
	Call(ctx context.Context, req ModelRequest, emit func(chunk json.RawMessage) error) (recording.Reply, error)
}

// ModelInfo names a model.
type ModelInfo struct {
	// Config is the request header's config.
	Config json.RawMessage
	// Provider and Model name it in request/context and in every
	// assistant message's source.
	Provider, Model string
	// Retry is the provider's retry policy; nil ends the turn at the first
	// failed call.
	Retry *llm.RetryPolicy
}

// ModelRequest is one model request.
type ModelRequest struct {
	// Turn and Step locate the call.
	Turn, Step int
	// Log holds the conversation so far: its user/message,
	// assistant/message and tool/result events.
	Log *session.Log
	// System is the system prompt; Tools the tools offered.
	System string
	Tools  []pipeline.Tool
	// Summary, when set, makes the call a compaction's summary call: the
	// compacted range's messages and the instruction, not the log's
	// conversation (a scripted model serves its next reply as for any
	// call).
	Summary *SummaryRequest
}

// The texts of a model call the script cannot answer, upstream's
// llm-replay's words: a session past its script's last reply (call N,
// 1-based, of a script of M), and a new session when every recorded
// session's script is bound (session k, the scripts bound so far and one,
// of S recorded).
const (
	exhaustedText  = "llm-replay: script exhausted — session requested model call #%d but its script has only %d; re-record the scenario"
	unrecordedText = "llm-replay: a model call arrived from an unrecorded session (#%d); the scenario recorded only %d session(s) — re-record it"
)

// errScriptExhausted is a scripted model's answer past its last reply.
type errScriptExhausted struct{ msg string }

func (e *errScriptExhausted) Error() string { return e.msg }

// constructedInfo names the scripted model of a replay: constructed from
// the recording, and named so in our log.
func constructedInfo() ModelInfo {
	config, _ := json.Marshal(session.ModelSource{Kind: "replay", Provider: ModelProvider, Model: ModelName})
	return ModelInfo{Config: config, Provider: ModelProvider, Model: ModelName}
}

// recordedInfo names the model the recording was made with (its first
// request header's config, its request context's provider and model), as a
// refresh writes them back.
func recordedInfo(rec *recording.Recording) ModelInfo {
	info := ModelInfo{}
	for _, e := range rec.Events {
		switch e.Type {
		case session.KindRequestHeader:
			var d struct {
				Header struct {
					Config json.RawMessage `json:"config"`
				} `json:"header"`
			}
			if info.Config == nil && json.Unmarshal(e.Data, &d) == nil {
				info.Config = d.Header.Config
			}
		case session.KindRequestContext:
			var d struct{ Provider, Model string }
			if info.Provider == "" && json.Unmarshal(e.Data, &d) == nil {
				info.Provider, info.Model = d.Provider, d.Model
			}
		}
	}
	if info.Config == nil {
		config, _ := json.Marshal(map[string]string{"provider": info.Provider, "model": info.Model})
		info.Config = config
	}
	return info
}

// scriptedModel serves a recording's script in order.
type scriptedModel struct {
	info   ModelInfo
	script *recording.Script
	next   int
	ws     string
	settle *settler
	gate   *jobs.Gate
	paced  bool
	// hydrate writes the replies' cwd tokens as ws ([hydrates]).
	hydrate bool
}

func (m *scriptedModel) Info() ModelInfo { return m.info }

// unconsumed is the number of replies never requested.
func (m *scriptedModel) unconsumed() int { return len(m.script.Replies) - m.next }

func (m *scriptedModel) Call(ctx context.Context, req ModelRequest, emit func(json.RawMessage) error) (recording.Reply, error) {
	if m.next >= len(m.script.Replies) {
		return recording.Reply{}, &errScriptExhausted{fmt.Sprintf(exhaustedText, m.next+1, len(m.script.Replies))}
	}
	reply := m.script.Replies[m.next]
	m.next++
	if m.hydrate {
		reply = hydrateReply(reply, m.ws)
	}
	if err := resolveReply(&reply, req.Log); err != nil {
		return reply, err
	}
	if err := m.think(ctx); err != nil {
		return reply, err
	}
	if ctx.Err() != nil {
		// cancelled while the model thought: upstream's loop checks the
		// signal before it reads the stream, so nothing of it is logged
		return reply, nil
	}
	for _, c := range reply.Chunks {
		if err := emit(ordered(c)); err != nil {
			return reply, err
		}
	}
	if t := reply.Throw; t != nil {
		// a thrown stream ends in the failure chunk upstream's LLM layer
		// makes of the throw
		f := &llm.Failure{Message: t.Message, Code: t.Code}
		if f.Code == "" {
			f.Code = "UNKNOWN"
		}
		reply.Finish = llm.Error
		reply.Failure, _ = json.Marshal(f)
		return reply, emit(failureChunk(f))
	}
	if reply.Hang != nil {
		if reply.Hang.ReadyFile != "" {
			if err := os.WriteFile(filepath.Join(m.ws, reply.Hang.ReadyFile), nil, 0o644); err != nil {
				return reply, fmt.Errorf("hang: write the ready file: %w", err)
			}
		}
		<-ctx.Done()
	}
	return reply, nil
}

// resolveReply resolves the fromRequest placeholders of reply's chunks
// against the conversation in log ([resolveChunks]); one that cannot be
// resolved makes the call throw its error, as upstream's llm-replay does.
func resolveReply(reply *recording.Reply, log *session.Log) error {
	if log == nil || !hasPlaceholder(reply.Chunks) {
		return nil // the log is read only for a reply that needs it
	}
	events, err := log.Events()
	if err != nil {
		return err
	}
	chunks, err := resolveChunks(reply.Chunks, events)
	if err != nil {
		reply.Chunks, reply.Throw, reply.Hang = nil, &recording.Throw{Message: err.Error()}, nil
		return nil
	}
	reply.Chunks = chunks
	return nil
}

// think is the constructed model's time to answer.
func (m *scriptedModel) think(ctx context.Context) error {
	// The constructed model takes as long as a model takes: at least
	// ModelLatency, and until the running background jobs settled (settler).
	// Upstream's recordings were made at a model's pace, and one of them
	// (background-job-admission) depends on a background job's first command
	// having run before two more model calls came back; a fixed sleep is a
	// race on a loaded machine.
	//
	// Upstream's replay model (llm-replay) answers without yielding to the
	// host's event loop unless it is paced (paceMs: a timer per chunk), so
	// the jobs' output and exits that arrive meanwhile are observed only at
	// the next yield (jobs.Gate); a paced recording (pacedModel) yields here.
	//
	// With no background job running, nothing of the host progresses while
	// the model thinks (a foreground call has settled before the model is
	// called), so the reply comes at once: the latency would only be spent.
	answerAt := time.Now()
	if len(m.settle.leaders()) > 0 {
		answerAt = answerAt.Add(ModelLatency)
	}
	if err := m.settle.wait(ctx); err != nil {
		return err
	}
	select {
	case <-time.After(time.Until(answerAt)):
	case <-ctx.Done():
	}
	if m.paced {
		m.gate.Pump()
	}
	return nil
}

// isExhausted reports whether err is a script's end.
func isExhausted(err error) (string, bool) {
	var ex *errScriptExhausted
	if errors.As(err, &ex) {
		return ex.msg, true
	}
	return "", false
}
