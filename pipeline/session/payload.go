package session

import "encoding/json"

// The data of the events an agent's loop writes and the runtime reads back,
// each in upstream's key order: the model reads an event as it is stored
// (session_event_read), and a replay compares our log with upstream's byte
// for byte. The events whose data holds the pipeline's blocks (a user
// message, a tool result) have theirs in package pipeline.

// TurnStart is turn/start's data.
type TurnStart struct {
	Turn int `json:"turn"`
}

// Step is the data of step/start and step/end.
type Step struct {
	Turn int `json:"turn"`
	Step int `json:"step"`
}

// TurnEnd is turn/end's data.
type TurnEnd struct {
	Turn   int       `json:"turn"`
	Reason EndReason `json:"reason"`
}

// The kinds of a turn's end (EndReason.Kind).
const (
	// EndCompleted: the model answered without a tool call, or a call
	// concluded the turn, or a step found nothing to do.
	EndCompleted = "completed"
	// EndMaxTokens: a step's reply was cut at the output limit (it stays
	// the turn's end once seen).
	EndMaxTokens = "max-tokens"
	// EndBlocked: a pre-step listener (a UserPromptSubmit hook) refused the
	// step.
	EndBlocked = "blocked"
	// EndError: a model call failed (not retried), or a pre-step listener
	// did; Error says how.
	EndError = "error"
	// EndAborted: the turn was cancelled; Reason says by whom.
	EndAborted = "aborted"
	// EndInterrupted: upstream's interrupted turn (we never write it; a
	// recording may hold it).
	EndInterrupted = "interrupted"
)

// Who aborted a turn (an aborted EndReason's Reason.Kind).
const (
	AbortUser   = "user"   // the user cancelled the prompt
	AbortParent = "parent" // the parent agent cancelled (a disposal, an interrupt)
)

// EndReason is why a turn ended: Kind, and for an aborted turn who aborted
// it (Reason), for a failed one the failure (Error).
type EndReason struct {
	Kind   string      `json:"kind"`
	Reason *AbortCause `json:"reason,omitempty"`
	Error  *Failure    `json:"error,omitempty"`
}

// Failed reports whether the turn failed (kind error).
func (r EndReason) Failed() bool { return r.Kind == EndError }

// AbortCause is who aborted a turn ({kind}). A cause of our own also says
// what stopped it (error), before its kind: the order our log has always
// written.
type AbortCause struct {
	Error string `json:"error,omitempty"`
	Kind  string `json:"kind"`
}

// Failure is a failed model call as upstream logs it ({message, code, ...}):
// an error finish chunk's, llm/retry's, and an error turn/end's, which is
// also how a failed pre-step listener ends a turn (code UNKNOWN).
type Failure struct {
	// Message says what failed; Code classifies it (AUTH, RATE_LIMIT,
	// SERVER, TRANSPORT, EMPTY_RESPONSE, UNKNOWN, ...).
	Message string `json:"message"`
	Code    string `json:"code"`
	// Status is the HTTP status of an HTTP error (0: none).
	Status int `json:"status,omitempty"`
	// ProviderRetryAfterMs is the provider's Retry-After in ms (0: none);
	// any JSON number, as upstream reads it (a fraction is a delay too).
	ProviderRetryAfterMs float64 `json:"providerRetryAfterMs,omitempty"`
	// RequestID is the provider's request id of an HTTP error.
	RequestID string `json:"requestId,omitempty"`
	// Reported is the failure as the model reported it: when set, the
	// failure is written as it is (a recorded model's failure may hold keys
	// of its own), and the fields are what was read of it.
	Reported json.RawMessage `json:"-"`
}

// ReportedFailure reads a failure as a model reported it (a JSON object in
// upstream's key order), keeping it as Reported. ok is false when a field
// has another type than upstream's (what could be read is still read).
func ReportedFailure(reported json.RawMessage) (f *Failure, ok bool) {
	f = &Failure{}
	ok = json.Unmarshal(reported, f) == nil
	f.Reported = reported
	return f, ok
}

// MarshalJSON writes Reported when set, else the fields.
func (f Failure) MarshalJSON() ([]byte, error) {
	if f.Reported != nil {
		return f.Reported, nil
	}
	type fields Failure // the fields, without this method
	return json.Marshal(fields(f))
}

// Retry is llm/retry's data: a failed call the provider's retry policy
// retries after DelayMs (MaxRetries: the policy's bound, absent in always
// mode).
type Retry struct {
	RetryID    string   `json:"retryId"`
	Turn       int      `json:"turn"`
	Step       int      `json:"step"`
	Provider   string   `json:"provider"`
	Mode       string   `json:"mode"`
	PolicyKey  string   `json:"policyKey"`
	Retry      int      `json:"retry"`
	MaxRetries *int     `json:"maxRetries,omitempty"`
	DelayMs    float64  `json:"delayMs"`
	Failure    *Failure `json:"failure"`
}

// RetryStarted is llm/retry-started's data: the retried attempt starts.
type RetryStarted struct {
	RetryID string `json:"retryId"`
	Turn    int    `json:"turn"`
	Step    int    `json:"step"`
	Retry   int    `json:"retry"`
}

// ToolCall is tool/call's data: one call of the model's (Arguments is the
// raw JSON string it gave).
type ToolCall struct {
	Turn      int    `json:"turn"`
	Step      int    `json:"step"`
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// AssistantChunk is assistant/chunk's data: one streamed chunk of the
// model's reply, as the model sent it.
type AssistantChunk struct {
	Turn  int             `json:"turn"`
	Step  int             `json:"step"`
	Chunk json.RawMessage `json:"chunk"`
}

// AssistantMessage is assistant/message's data: the assembled reply, its
// usage (when reported) and whether a cancel cut it.
type AssistantMessage struct {
	Turn        int             `json:"turn"`
	Step        int             `json:"step"`
	Message     AssistantBody   `json:"message"`
	Usage       json.RawMessage `json:"usage,omitempty"`
	Interrupted bool            `json:"interrupted,omitempty"`
}

// AssistantBody is an assistant message: its blocks (text, reasoning,
// tool-call; as the model gave them) and the model that wrote it.
type AssistantBody struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
	Source  ModelSource       `json:"source"`
	ID      string            `json:"id"`
}

// ModelSource names a model: an assistant message's source (kind model),
// a replay's request header config (kind replay).
type ModelSource struct {
	Kind     string `json:"kind"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// RequestContext is request/context's data: the model's route.
type RequestContext struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}
