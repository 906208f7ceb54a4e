package approval

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Policy is the approval policy of a session.
type Policy string

// The two policies (VERBATIM).
const (
	// Ask lets requests reach the answerers (the default).
	Ask Policy = "ask"
	// Never rejects every request before any answerer runs.
	Never Policy = "never"
)

// ContextName is the runtime-context section name of the policy sentence
// (VERBATIM).
const ContextName = "approval:policy"

// ParsePolicy validates p with the VERBATIM upstream message.
func ParsePolicy(p string) (Policy, error) {
	switch Policy(p) {
	case Ask, Never:
		return Policy(p), nil
	}
	return "", fmt.Errorf("approval policy must be one of \"ask\" or \"never\" (got %q)", p)
}

// ContextText is the VERBATIM model-facing sentence for policy p.
func ContextText(p Policy) string {
	if p == Never {
		return "Approval prompts are disabled in this session: actions that require approval are rejected automatically — do not request sandbox escalation (do not set `sandbox_permissions`)."
	}
	return "Approval policy: ask. Operations that require approval may ask through the configured answerers; without an available answerer, the request fails closed."
}

// ChangeNotice is the VERBATIM user message injected by a live policy switch.
func ChangeNotice(prev, next Policy) string {
	return fmt.Sprintf("The approval policy changed from %q to %q (changed by the user).", string(prev), string(next))
}

// Answerer answers approval requests. The first answerer in the chain that
// returns an outcome wins; one that does not own the request calls next. The
// terminal answer is unavailable. An error, a panic or an answer outside the
// four outcomes all become unavailable.
type Answerer func(ctx context.Context, req *pipeline.ApprovalRequest, next func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error)

// Service is the approval service: mechanism only; the policy is the answerers.
type Service struct {
	mu        sync.RWMutex
	answerers []entry
	nextID    uint64
	config    Policy
	newID     func() string
	// answered runs when an answer arrives, before it is accepted: a test
	// seam that cancels there, the one moment a late answer races the
	// caller's cancellation. A no-op otherwise.
	answered func()
}

type entry struct {
	id    uint64
	fn    Answerer
	scope *pipeline.Scope // nil: a global answerer
}

// Option configures a Service.
type Option func(*Service) error

// WithPolicy sets the configured policy (used when the session log has no
// approval/policy event). An invalid policy is an error at construction.
func WithPolicy(p Policy) Option {
	return func(s *Service) error {
		v, err := ParsePolicy(string(p))
		s.config = v
		return err
	}
}

// New returns a service with no answerers and configured policy ask.
func New(opts ...Option) (*Service, error) {
	s := &Service{config: Ask, newID: NewUUID, answered: func() {}}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Answer appends an answerer to the chain and returns its remover.
func (s *Service) Answer(a Answerer) (remove func()) { return s.add(a, false, nil) }

// PrependAnswer puts an answerer before every one registered so far.
func (s *Service) PrependAnswer(a Answerer) (remove func()) { return s.add(a, true, nil) }

// Scoped is the answerer surface of one scope: its answerers see only the
// requests of agents whose scope is that scope or below it, in the one chain
// (registration order, global and scoped alike), and are removed when the
// scope ends.
type Scoped struct {
	s     *Service
	scope *pipeline.Scope
}

// In returns the answerer surface of scope (nil: global).
func (s *Service) In(scope *pipeline.Scope) Scoped { return Scoped{s, scope} }

// Answer appends an answerer for the scope's requests.
func (sc Scoped) Answer(a Answerer) (remove func(), err error) { return sc.add(a, false) }

// PrependAnswer puts an answerer for the scope's requests before every one registered so far.
func (sc Scoped) PrependAnswer(a Answerer) (remove func(), err error) { return sc.add(a, true) }

func (sc Scoped) add(a Answerer, prepend bool) (func(), error) {
	if sc.scope == nil {
		return sc.s.add(a, prepend, nil), nil
	}
	return sc.scope.Own(func() func() { return sc.s.add(a, prepend, sc.scope) })
}

func (s *Service) add(a Answerer, prepend bool, scope *pipeline.Scope) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	e := entry{id: s.nextID, fn: a, scope: scope}
	list := make([]entry, 0, len(s.answerers)+1)
	if prepend {
		list = append(append(list, e), s.answerers...)
	} else {
		list = append(append(list, s.answerers...), e)
	}
	s.answerers = list
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		out := make([]entry, 0, len(s.answerers))
		for _, x := range s.answerers {
			if x.id != e.id {
				out = append(out, x)
			}
		}
		s.answerers = out
	}
}

// ConfiguredPolicy returns the configured policy.
func (s *Service) ConfiguredPolicy() Policy { return s.config }

// SessionPolicy folds the log: the policy of the last approval/policy event.
// ok is false when there is none. An event with an invalid policy is an error
// naming its seq and field.
func SessionPolicy(events []session.Event) (p Policy, ok bool, err error) {
	e, found := session.Last(events, session.KindApprovalPolicy)
	if !found {
		return "", false, nil
	}
	v, _ := session.LastField(events, session.KindApprovalPolicy, "policy")
	if p, err = ParsePolicy(v); err != nil {
		return "", false, fmt.Errorf("session event seq %d (%s) field policy: %w", e.Seq, session.KindApprovalPolicy, err)
	}
	return p, true, nil
}

// EffectivePolicy is the last approval/policy in events, else the configured policy.
func (s *Service) EffectivePolicy(events []session.Event) (Policy, error) {
	p, ok, err := SessionPolicy(events)
	if err != nil || ok {
		return p, err
	}
	return s.config, nil
}

// ErrOutsideTurn begins the message of a request made outside an open turn.
const ErrOutsideTurn = "approval.request() outside an open turn"

type asked struct {
	ID       string `json:"id"`
	ToolName string `json:"toolName"`
	CallID   string `json:"callId,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

type decided struct {
	ID      string                   `json:"id"`
	Outcome pipeline.ApprovalOutcome `json:"outcome"`
}

// Request asks for approval of one action and returns the outcome, after
// appending approval/asked and exactly one approval/decided to the agent's
// session log. ctx is the caller's signal: already done → cancelled without
// asking; done while waiting → cancelled at once, the late answer discarded.
// Policy never → rejected before any answerer runs. No answerer, an error, a
// panic or an out-of-vocabulary answer → unavailable. A request outside an
// open turn, or an append failure, is an error.
func (s *Service) Request(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	if req.Agent == nil {
		return "", errors.New("approval.request() needs an agent: the call has no agent to route it through")
	}
	log := req.Agent.Session
	if log == nil {
		return "", fmt.Errorf("%s: agent %q has no session log", ErrOutsideTurn, req.Agent.ID)
	}
	events, err := log.Events()
	if err != nil {
		return "", fmt.Errorf("approval: read session log: %w", err)
	}
	if !session.OpenTurn(events) {
		return "", fmt.Errorf("%s: session %s has no turn/start without a later turn/end", ErrOutsideTurn, log.ID())
	}
	if ctx == nil {
		ctx = context.Background()
	}
	id := s.newID()
	if _, err := log.Append(session.KindApprovalAsked, asked{ID: id, ToolName: req.ToolName, CallID: req.CallID, Reason: req.Reason}); err != nil {
		return "", err
	}
	// The policy is read after the asked event, not from the snapshot above:
	// a switch to never that reached the log before this request's audit
	// entry decides it, so no answerer can run past it.
	if events, err = log.Events(); err != nil {
		return "", fmt.Errorf("approval: read session log: %w", err)
	}
	outcome, err := s.decide(ctx, &req, events)
	if err != nil {
		return "", err
	}
	if _, err := log.Append(session.KindApprovalDecided, decided{ID: id, Outcome: outcome}); err != nil {
		return "", err
	}
	return outcome, nil
}

// --8<-- [start:decide]
func (s *Service) decide(ctx context.Context, req *pipeline.ApprovalRequest, events []session.Event) (pipeline.ApprovalOutcome, error) {
	if ctx.Err() != nil {
		return pipeline.Cancelled, nil
	}
	p, err := s.EffectivePolicy(events)
	if err != nil {
		return "", err
	}
	if p == Never {
		return pipeline.Rejected, nil
	}
	s.mu.RLock()
	list := forAgent(s.answerers, req.Agent)
	s.mu.RUnlock()
	done := make(chan pipeline.ApprovalOutcome, 1)
	go func() { done <- runChain(ctx, req, list) }()
	select {
	case o := <-done:
		s.answered()
		if ctx.Err() != nil { // cancelled while the answer arrived: cancellation wins
			return pipeline.Cancelled, nil
		}
		return o, nil
	case <-ctx.Done():
		return pipeline.Cancelled, nil
	}
}

// --8<-- [end:decide]

// forAgent returns the answerers that see a's requests: the global ones and
// those of a's scope or an ancestor of it, in chain order.
func forAgent(list []entry, a *pipeline.Agent) []entry {
	out := make([]entry, 0, len(list))
	for _, e := range list {
		if a.Scope().Within(e.scope) {
			out = append(out, e)
		}
	}
	return out
}

// runChain runs the answerer chain and folds every failure into unavailable.
func runChain(ctx context.Context, req *pipeline.ApprovalRequest, list []entry) (out pipeline.ApprovalOutcome) {
	defer func() {
		if recover() != nil {
			out = pipeline.Unavailable
		}
	}()
	var step func(i int) (pipeline.ApprovalOutcome, error)
	step = func(i int) (pipeline.ApprovalOutcome, error) {
		if i == len(list) {
			return pipeline.Unavailable, nil
		}
		return list[i].fn(ctx, req, func() (pipeline.ApprovalOutcome, error) { return step(i + 1) })
	}
	o, err := step(0)
	if err != nil || !o.Valid() {
		return pipeline.Unavailable
	}
	return o
}

// policyEvent is the data of approval/policy.
type policyEvent struct {
	Policy Policy `json:"policy"`
	Source string `json:"source,omitempty"`
}

// SetSessionPolicy validates p and appends exactly one approval/policy {policy}.
func SetSessionPolicy(log *session.Log, p Policy) (session.Event, error) {
	if _, err := ParsePolicy(string(p)); err != nil {
		return session.Event{}, err
	}
	return log.Append(session.KindApprovalPolicy, policyEvent{Policy: p})
}

// NoticeMessage is the user/message data of the change notice.
type NoticeMessage = pipeline.UserMessage[map[string]string]

// SetPolicy is the live switch (the /permission command): a no-op when the
// effective policy is already p; otherwise it appends approval/policy and a
// user/message with the VERBATIM change notice (source
// {kind:"plugin", plugin:"user-approval"}, as upstream's user-approval
// plugin writes it; surfaceOp append: entered into the conversation). It returns the appended events.
func (s *Service) SetPolicy(log *session.Log, p Policy) ([]session.Event, error) {
	if _, err := ParsePolicy(string(p)); err != nil {
		return nil, err
	}
	events, err := log.Events()
	if err != nil {
		return nil, err
	}
	prev, err := s.EffectivePolicy(events)
	if err != nil {
		return nil, err
	}
	if prev == p {
		return nil, nil
	}
	e1, err := SetSessionPolicy(log, p)
	if err != nil {
		return nil, err
	}
	e2, err := log.AppendWith(session.KindUserMessage, NoticeMessage{
		Content: []pipeline.Block{pipeline.TextBlock(ChangeNotice(prev, p))},
		Source:  map[string]string{"kind": "plugin", "plugin": "user-approval"},
		Role:    "user",
		ID:      NewUUID(),
	}, session.AppendOptions{SurfaceOp: "append"})
	if err != nil {
		return []session.Event{e1}, err
	}
	return []session.Event{e1, e2}, nil
}

// NewUUID returns a fresh random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("approval: crypto/rand failed: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
