package replay

import (
	"sync"

	"github.com/dshsim/dshsim/pipeline"
)

// noticeSource is the source of a job's completion notice (VERBATIM shape).
type noticeSource struct {
	Kind    string `json:"kind"`
	Plugin  string `json:"plugin"`
	Form    string `json:"form"`
	Summary string `json:"summary"`
}

// blocks is content of text blocks.
func blocks(texts ...string) []any {
	out := make([]any, len(texts))
	for i, t := range texts {
		out[i] = pipeline.TextBlock(t)
	}
	return out
}

// inbox is an agent's next-step inbox: job completion notices, the context
// messages of tool results (a hook's additionalContext), and messages
// steered to it (a child's report). A message is spliced into the queue
// when it arrives (agent/inbox/spliced with the message), claimed right
// after the next step/end or at the next turn's start (agent/inbox/spliced
// removing them) and shown to the model as a user/message after the next
// step/start. A runner that never started is learnt of asynchronously
// upstream, after the step that started the job ended and its claim ran:
// such a notice ("late") is spliced in after that claim, so it waits a
// whole step, as upstream's recording missing-sandbox-runner shows.
type inbox struct {
	mu    sync.Mutex
	log   appender
	wake  func()        // an idle agent wakes (nil: nobody)
	queue []userMessage // spliced in, not claimed
	late  []userMessage // held until after the current step's claim
	woken bool          // a steered message waits: an idle agent runs a turn for it
	err   error         // the first failed append of a delivery
}

type appender interface {
	append(typ string, data any) error
}

// deliver receives one notice (from a job's goroutine).
func (in *inbox) deliver(text, summary string, late bool) {
	m := userMessage{
		Content: blocks(text),
		Source:  noticeSource{Kind: "plugin", Plugin: "tool-jobs", Form: "notice", Summary: summary},
		Role:    "user", ID: newUUID(),
	}
	in.mu.Lock()
	if late {
		in.late = append(in.late, m)
		in.mu.Unlock()
		return
	}
	in.spliceLocked(m)
	in.mu.Unlock()
}

// steer splices m for the next step and wakes an idle agent (a job notice
// does not: it waits for the next turn, as upstream injects a notice
// without waking).
func (in *inbox) steer(m userMessage) error {
	in.mu.Lock()
	in.spliceLocked(m)
	in.woken = true
	err := in.err
	in.mu.Unlock()
	if in.wake != nil {
		in.wake()
	}
	return err
}

// wants reports whether a steered message waits (an idle agent then runs
// a turn).
func (in *inbox) wants() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.woken && len(in.queue) > 0
}

// pluginSource is the source of a plugin's context message (a hook's).
type pluginSource struct {
	Kind   string `json:"kind"`
	Plugin string `json:"plugin"`
}

// stage splices a tool result's context messages (a hook's
// additionalContext) into the queue right after its tool/result, each as
// upstream's plugin user message.
func (in *inbox) stage(msgs []pipeline.ContextMessage) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, cm := range msgs {
		in.spliceLocked(userMessage{Content: blocks(cm.Texts...), Source: pluginSource{Kind: "plugin", Plugin: cm.Plugin}, Role: "user", ID: newUUID()})
	}
	return in.err
}

func (in *inbox) spliceLocked(m userMessage) {
	if err := in.log.append("agent/inbox/spliced", splice{Target: "next-step", Start: len(in.queue), Inserted: []userMessage{m}}); err != nil && in.err == nil {
		in.err = err
	}
	in.queue = append(in.queue, m)
}

// afterStep claims the queue (right after a step/end, or at a turn's
// start) and then splices in the late notices; it returns the claimed
// messages for the next step.
func (in *inbox) afterStep() ([]userMessage, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	claimed := in.queue
	in.queue, in.woken = nil, false
	if n := len(claimed); n > 0 {
		if err := in.log.append("agent/inbox/spliced", splice{Target: "next-step", Start: 0, RemovedCount: &n, Inserted: []userMessage{}}); err != nil {
			return nil, err
		}
	}
	for _, m := range in.late {
		in.spliceLocked(m)
	}
	in.late = nil
	return claimed, in.err
}
