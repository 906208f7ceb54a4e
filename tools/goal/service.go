package goal

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Activations of a goal: whether another automatic round is armed
// (process-local, never logged).
const (
	Armed    = "armed"
	Disarmed = "disarmed"
)

// DefaultMaxGoalRounds is upstream's defaultMaxGoalRounds.
const DefaultMaxGoalRounds = 256

// ErrorName is the goal domain's error class (upstream's GoalError).
const ErrorName = "GoalError"

// View is the current goal as the service reads it: the durable
// snapshot, its counters and times, and its activation.
type View struct {
	Goal
	RoundsStarted int64
	CreatedAt     int64
	UpdatedAt     int64
	Activation    string
}

// Service is the same-session goal domain (upstream's GoalService): the
// state folded from each session's log, mutations appended to it as
// goal/change events, and the process-local activation per session.
type Service struct {
	// Now is the clock in Unix milliseconds (nil: the wall clock).
	Now func() int64
	// NewID makes a goal id (nil: "goal-" and a random UUID).
	NewID func() string

	mu     sync.Mutex
	caches map[*session.Log]*cache
}

type cache struct {
	state      State
	activation string
	observed   int
	pendingSeq int64
	pendingAct string
}

func goalError(code, format string, args ...any) error {
	return pipeline.NewErrorf(ErrorName, code, format, args...)
}

func (s *Service) now() int64 {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now().UnixMilli()
}

func (s *Service) newID() string {
	if s.NewID != nil {
		return s.NewID()
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("goal-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// synced returns log's cache, caught up with its events; the caller holds
// s.mu. A cache starts disarmed (a session's start disarms its goal).
func (s *Service) synced(log *session.Log) (*cache, error) {
	if s.caches == nil {
		s.caches = map[*session.Log]*cache{}
	}
	c := s.caches[log]
	if c == nil {
		c = &cache{activation: Disarmed, pendingSeq: -1}
		s.caches[log] = c
	}
	events, err := log.Events()
	if err != nil {
		return nil, err
	}
	for _, e := range events[min(c.observed, len(events)):] {
		if err := c.state.Apply(e); err != nil {
			return nil, err
		}
		if e.Type == session.KindGoalChange {
			c.activation = Disarmed
			if e.Seq == c.pendingSeq {
				c.activation = c.pendingAct
			}
		}
		c.observed++
	}
	return c, nil
}

func (c *cache) view() *View {
	if c.state.Goal == nil {
		return nil
	}
	return &View{Goal: *c.state.Goal, RoundsStarted: c.state.RoundsStarted, CreatedAt: c.state.CreatedAt, UpdatedAt: c.state.UpdatedAt, Activation: c.activation}
}

// Get reads log's current goal (nil: none).
func (s *Service) Get(log *session.Log) (*View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.synced(log)
	if err != nil {
		return nil, err
	}
	return c.view(), nil
}

// Create creates and arms a goal; a current goal that is not complete is
// refused. maxRounds nil takes [DefaultMaxGoalRounds].
func (s *Service) Create(log *session.Log, objective string, maxRounds *float64) (*View, error) {
	obj, err := resolveObjective(objective)
	if err != nil {
		return nil, err
	}
	rounds := int64(DefaultMaxGoalRounds)
	if maxRounds != nil {
		if rounds, err = resolveMaxRounds(*maxRounds); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.synced(log)
	if err != nil {
		return nil, err
	}
	if cur := c.state.Goal; cur != nil && cur.Phase != PhaseComplete {
		return nil, goalError("GOAL_ALREADY_EXISTS", "goal %s already exists with phase %s", jsjson.Quote(cur.ID), jsjson.Quote(cur.Phase))
	}
	now := s.now()
	g := Goal{ID: s.newID(), Revision: 1, Objective: obj, Phase: PhaseActive, MaxGoalRounds: rounds}
	return s.commit(log, c, OpCreate, g, 0, now, now, Armed)
}

// Edit replaces the objective and/or the round cap (at least one).
func (s *Service) Edit(log *session.Log, ref Ref, objective *string, maxRounds *float64) (*View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, cur, err := s.current(log, ref)
	if err != nil {
		return nil, err
	}
	if objective == nil && maxRounds == nil {
		return nil, goalError("GOAL_INVALID_EDIT", "goal edit requires objective and/or maxGoalRounds")
	}
	g := *cur
	g.Revision++
	if objective != nil {
		if g.Objective, err = resolveObjective(*objective); err != nil {
			return nil, err
		}
	}
	if maxRounds != nil {
		if g.MaxGoalRounds, err = resolveMaxRounds(*maxRounds); err != nil {
			return nil, err
		}
	}
	return s.commitCurrent(log, c, OpEdit, g, c.activation)
}

// Pause pauses an active goal and disarms it.
func (s *Service) Pause(log *session.Log, ref Ref) (*View, error) {
	return s.transition(log, ref, OpPause, []string{PhaseActive}, PhasePaused, Disarmed)
}

// Complete marks a goal that is not complete complete and disarms it.
func (s *Service) Complete(log *session.Log, ref Ref) (*View, error) {
	return s.transition(log, ref, OpComplete, []string{PhaseActive, PhasePaused, PhaseBlocked}, PhaseComplete, Disarmed)
}

// Resume resumes and arms a stopped goal, or rearms a disarmed active
// one, while its round budget lasts.
func (s *Service) Resume(log *session.Log, ref Ref) (*View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, cur, err := s.current(log, ref)
	if err != nil {
		return nil, err
	}
	allowed := []string{PhaseActive, PhasePaused, PhaseBlocked}
	switch {
	case !slices.Contains(allowed, cur.Phase):
		return nil, transitionError(cur, OpResume, allowed)
	case cur.Phase == PhaseActive && c.activation == Armed:
		return nil, goalError("GOAL_INVALID_TRANSITION", "goal %s is already active and armed", jsjson.Quote(cur.ID))
	case c.state.RoundsStarted >= cur.MaxGoalRounds:
		return nil, goalError("GOAL_INVALID_TRANSITION", "goal %s exhausted %d goal rounds; increase maxGoalRounds before resuming", jsjson.Quote(cur.ID), cur.MaxGoalRounds)
	}
	return s.commitCurrent(log, c, OpResume, withPhase(cur, PhaseActive), Armed)
}

// Block marks an active goal blocked with reason and disarms it.
func (s *Service) Block(log *session.Log, ref Ref, reason BlockReason) (*View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, cur, err := s.current(log, ref)
	if err != nil {
		return nil, err
	}
	if cur.Phase != PhaseActive {
		return nil, transitionError(cur, OpBlock, []string{PhaseActive})
	}
	msg := jsjson.Trim(reason.Message)
	if !kebab.MatchString(reason.Code) || msg == "" {
		return nil, goalError("GOAL_INVALID_BLOCK_REASON", "goal block reason requires a lower-kebab-case code and a non-empty message")
	}
	g := withPhase(cur, PhaseBlocked)
	g.BlockedReason = &BlockReason{Code: reason.Code, Message: msg}
	return s.commitCurrent(log, c, OpBlock, g, Disarmed)
}

func (s *Service) transition(log *session.Log, ref Ref, op string, allowed []string, phase, act string) (*View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, cur, err := s.current(log, ref)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(allowed, cur.Phase) {
		return nil, transitionError(cur, op, allowed)
	}
	return s.commitCurrent(log, c, op, withPhase(cur, phase), act)
}

// current is log's cache and its current goal, which ref must name.
func (s *Service) current(log *session.Log, ref Ref) (*cache, *Goal, error) {
	c, err := s.synced(log)
	if err != nil {
		return nil, nil, err
	}
	cur := c.state.Goal
	if cur == nil {
		return nil, nil, goalError("GOAL_NOT_FOUND", "no current goal")
	}
	if ref.ID != cur.ID || ref.Revision != cur.Revision {
		return nil, nil, goalError("GOAL_STALE_REVISION", "stale goal ref %s revision %d; current is %s revision %d", jsjson.Quote(ref.ID), ref.Revision, jsjson.Quote(cur.ID), cur.Revision)
	}
	return c, cur, nil
}

func transitionError(cur *Goal, op string, allowed []string) error {
	return goalError("GOAL_INVALID_TRANSITION", "cannot %s goal %s from phase %s; expected %s", op, jsjson.Quote(cur.ID), jsjson.Quote(cur.Phase), strings.Join(allowed, " or "))
}

func withPhase(cur *Goal, phase string) Goal {
	return Goal{ID: cur.ID, Revision: cur.Revision + 1, Objective: cur.Objective, Phase: phase, MaxGoalRounds: cur.MaxGoalRounds}
}

// commitCurrent commits a mutation keeping the current counters and
// creation time; its update time never goes back.
func (s *Service) commitCurrent(log *session.Log, c *cache, op string, g Goal, act string) (*View, error) {
	return s.commit(log, c, op, g, c.state.RoundsStarted, c.state.CreatedAt, max(s.now(), c.state.UpdatedAt), act)
}

// commit appends one goal/change and folds it, with its activation.
func (s *Service) commit(log *session.Log, c *cache, op string, g Goal, rounds, created, updated int64, act string) (*View, error) {
	change := Change{Kind: ChangeKind, Version: ChangeVersion, Operation: op, Goal: &g, RoundsStarted: &rounds, CreatedAt: &created, UpdatedAt: &updated}
	e, err := log.Append(session.KindGoalChange, change)
	if err != nil {
		return nil, fmt.Errorf("goal: append %s: %w", session.KindGoalChange, err)
	}
	c.pendingSeq, c.pendingAct = e.Seq, act
	defer func() { c.pendingSeq = -1 }()
	if _, err := s.synced(log); err != nil {
		return nil, err
	}
	return c.view(), nil
}

// resolveObjective trims an objective; an empty one is refused.
func resolveObjective(v string) (string, error) {
	t := jsjson.Trim(v)
	if t == "" {
		return "", goalError("GOAL_INVALID_OBJECTIVE", "goal objective must be a non-empty string")
	}
	return t, nil
}

// resolveMaxRounds checks a round cap: a positive safe integer.
func resolveMaxRounds(v float64) (int64, error) {
	if !SafeInteger(v) || v < 1 {
		return 0, goalError("GOAL_INVALID_MAX_ROUNDS", "maxGoalRounds must be a positive safe integer")
	}
	return int64(v), nil
}

// Disarm removes the automatic authority of log's goal without changing
// its phase or revision (a driver's fence: an aborted or failed turn).
func (s *Service) Disarm(log *session.Log) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.synced(log)
	if err == nil {
		c.activation = Disarmed
	}
	return err
}

// Clear removes the current goal ref names: one clear tombstone (the
// next revision of the goal) is appended, and the session is disarmed.
func (s *Service) Clear(log *session.Log, ref Ref) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, cur, err := s.current(log, ref)
	if err != nil {
		return err
	}
	at := max(s.now(), c.state.UpdatedAt)
	change := Change{Kind: ChangeKind, Version: ChangeVersion, Operation: OpClear, Cleared: &Ref{cur.ID, cur.Revision + 1}, ClearedAt: &at}
	e, err := log.Append(session.KindGoalChange, change)
	if err != nil {
		return fmt.Errorf("goal: append %s: %w", session.KindGoalChange, err)
	}
	c.pendingSeq, c.pendingAct = e.Seq, Disarmed
	defer func() { c.pendingSeq = -1 }()
	_, err = s.synced(log)
	return err
}
