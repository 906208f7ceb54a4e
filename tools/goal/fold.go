package goal

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Phases of a goal (VERBATIM).
const (
	PhaseActive   = "active"
	PhasePaused   = "paused"
	PhaseBlocked  = "blocked"
	PhaseComplete = "complete"
)

// Operations of a goal/change event (VERBATIM).
const (
	OpCreate   = "create"
	OpEdit     = "edit"
	OpPause    = "pause"
	OpResume   = "resume"
	OpComplete = "complete"
	OpBlock    = "block"
	OpClear    = "clear"
)

// ChangeKind is a goal/change event's data.kind; ChangeVersion its
// version.
const (
	ChangeKind    = session.KindGoalChange
	ChangeVersion = 1
)

// Goal is one durable goal revision, as a goal/change event stores it
// (upstream's key order).
type Goal struct {
	ID            string       `json:"id"`
	Revision      int64        `json:"revision"`
	Objective     string       `json:"objective"`
	Phase         string       `json:"phase"`
	MaxGoalRounds int64        `json:"maxGoalRounds"`
	BlockedReason *BlockReason `json:"blockedReason,omitempty"`
}

// BlockReason is a blocked goal's explanation.
type BlockReason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Ref names one goal revision.
type Ref struct {
	ID       string `json:"id"`
	Revision int64  `json:"revision"`
}

// Change is a goal/change event's data: a full snapshot (every operation
// but clear) or a clear tombstone.
type Change struct {
	Kind          string `json:"kind"`
	Version       int    `json:"version"`
	Operation     string `json:"operation"`
	Goal          *Goal  `json:"goal,omitempty"`
	RoundsStarted *int64 `json:"roundsStarted,omitempty"`
	CreatedAt     *int64 `json:"createdAt,omitempty"`
	UpdatedAt     *int64 `json:"updatedAt,omitempty"`
	Cleared       *Ref   `json:"cleared,omitempty"`
	ClearedAt     *int64 `json:"clearedAt,omitempty"`
}

// State is the durable goal projection folded from a log: the current
// goal (nil: none), its rounds started and its times.
type State struct {
	Goal          *Goal
	RoundsStarted int64
	CreatedAt     int64
	UpdatedAt     int64
	seen          map[string]bool
}

// Fold folds a log's events into the goal state (upstream's strict
// replay fold): a malformed goal/change or an illegal transition is an
// error naming the event's seq.
func Fold(events []session.Event) (State, error) {
	var s State
	for _, e := range events {
		if err := s.Apply(e); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Apply folds one event: a goal/change, or a user/message of a goal
// round (which counts the round); every other event leaves s as it is.
func (s *State) Apply(e session.Event) error {
	switch e.Type {
	case session.KindGoalChange:
		c, err := DecodeChange(e.Data)
		if err == nil {
			err = s.applyChange(c)
		}
		if err != nil {
			return fmt.Errorf("goal change at session event %d: %w", e.Seq, err)
		}
	case session.KindUserMessage:
		var d struct {
			Source RoundSource `json:"source"`
		}
		if json.Unmarshal(e.Data, &d) != nil || d.Source.Kind != SourceKind {
			return nil
		}
		g := s.Goal
		if g == nil || g.Phase != PhaseActive || d.Source.GoalID != g.ID || d.Source.Revision != g.Revision ||
			d.Source.Round != s.RoundsStarted+1 || d.Source.Round > g.MaxGoalRounds {
			return fmt.Errorf("goal round at session event %d is not the next admitted round of the active goal", e.Seq)
		}
		s.RoundsStarted = d.Source.Round
	}
	return nil
}

var kebab = regexp.MustCompile(`^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$`)

// snapshotKeys and clearKeys are the exact fields of a change (sorted).
var (
	snapshotKeys = "createdAt,goal,kind,operation,roundsStarted,updatedAt,version"
	clearKeys    = "cleared,clearedAt,kind,operation,version"
)

// DecodeChange decodes and checks a goal/change event's data as
// upstream's decoder does (its texts).
func DecodeChange(data json.RawMessage) (Change, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return Change{}, errors.New("goal change must be a record")
	}
	var c Change
	if string(m["kind"]) != `"goal/change"` {
		return c, errors.New("goal change kind must be \"goal/change\"")
	}
	if string(m["version"]) != "1" {
		return c, fmt.Errorf("unsupported goal change version %s", strings.Trim(string(m["version"]), `"`))
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("goal change: %v", err)
	}
	if c.Operation == OpClear {
		if strings.Join(keys, ",") != clearKeys {
			return c, fmt.Errorf("goal clear change must have exactly %s fields", clearKeys)
		}
		if c.Cleared == nil || c.Cleared.ID == "" || c.Cleared.Revision < 1 {
			return c, errors.New("goal clear tombstone must have a non-empty id and a positive revision")
		}
		return c, nonNegative(c.ClearedAt, "clearedAt")
	}
	if !slices.Contains([]string{OpCreate, OpEdit, OpPause, OpResume, OpComplete, OpBlock}, c.Operation) {
		return c, errors.New("goal change operation is invalid")
	}
	if strings.Join(keys, ",") != snapshotKeys {
		return c, fmt.Errorf("goal snapshot change must have exactly %s fields", snapshotKeys)
	}
	for _, f := range []struct {
		v    *int64
		name string
	}{{c.CreatedAt, "createdAt"}, {c.UpdatedAt, "updatedAt"}, {c.RoundsStarted, "roundsStarted"}} {
		if err := nonNegative(f.v, f.name); err != nil {
			return c, err
		}
	}
	if *c.UpdatedAt < *c.CreatedAt {
		return c, errors.New("goal change updatedAt cannot precede createdAt")
	}
	return c, checkSnapshot(c.Goal)
}

func nonNegative(v *int64, field string) error {
	if v == nil || *v < 0 {
		return fmt.Errorf("goal change %s must be a non-negative safe integer", field)
	}
	return nil
}

// checkSnapshot checks one snapshot's fields.
func checkSnapshot(g *Goal) error {
	switch {
	case g == nil:
		return errors.New("goal change goal must be a record")
	case g.ID == "":
		return errors.New("goal change goal.id must be a non-empty string")
	case jsjson.Trim(g.Objective) == "" || g.Objective != jsjson.Trim(g.Objective):
		return errors.New("goal change goal.objective must be non-empty and normalized")
	case !slices.Contains([]string{PhaseActive, PhasePaused, PhaseBlocked, PhaseComplete}, g.Phase):
		return errors.New("goal change goal.phase is invalid")
	case (g.Phase == PhaseBlocked) != (g.BlockedReason != nil):
		return fmt.Errorf("goal change goal for phase %s has the wrong fields (blockedReason only when blocked)", g.Phase)
	case g.Revision < 1:
		return errors.New("goal change goal.revision must be a positive safe integer")
	case g.MaxGoalRounds < 1:
		return errors.New("goal change goal.maxGoalRounds must be a positive safe integer")
	case g.BlockedReason != nil && !kebab.MatchString(g.BlockedReason.Code):
		return errors.New("goal change goal.blockedReason.code must be lower-kebab-case")
	case g.BlockedReason != nil && (jsjson.Trim(g.BlockedReason.Message) == "" || g.BlockedReason.Message != jsjson.Trim(g.BlockedReason.Message)):
		return errors.New("goal change goal.blockedReason.message must be non-empty and normalized")
	}
	return nil
}

// applyChange applies one decoded change, checking its transition.
func (s *State) applyChange(c Change) error {
	if c.Operation == OpClear {
		if s.Goal == nil {
			return errors.New("goal clear requires a current goal")
		}
		if c.Cleared.ID != s.Goal.ID || c.Cleared.Revision != s.Goal.Revision+1 {
			return errors.New("goal clear must advance the current goal by one revision")
		}
		if *c.ClearedAt < s.UpdatedAt {
			return errors.New("goal clear timestamp cannot precede the current goal update")
		}
		s.Goal, s.RoundsStarted, s.CreatedAt, s.UpdatedAt = nil, 0, 0, 0
		return nil
	}
	next := c.Goal
	if c.Operation == OpCreate {
		if next.Revision != 1 || next.Phase != PhaseActive || *c.RoundsStarted != 0 || (s.Goal != nil && s.Goal.Phase != PhaseComplete) || s.seen[next.ID] {
			return errors.New("goal create requires a fresh active revision-one goal with zero rounds")
		}
		if s.seen == nil {
			s.seen = map[string]bool{}
		}
		s.seen[next.ID] = true
	} else if err := s.transition(c); err != nil {
		return err
	}
	g := *next
	s.Goal, s.RoundsStarted, s.CreatedAt, s.UpdatedAt = &g, *c.RoundsStarted, *c.CreatedAt, *c.UpdatedAt
	return nil
}

// transition checks a non-create snapshot against the current goal.
func (s *State) transition(c Change) error {
	cur, next, op := s.Goal, c.Goal, c.Operation
	switch {
	case cur == nil:
		return fmt.Errorf("goal %s requires a current goal", op)
	case next.ID != cur.ID || next.Revision != cur.Revision+1:
		return fmt.Errorf("goal %s must advance the current goal by one revision", op)
	case *c.CreatedAt != s.CreatedAt || *c.UpdatedAt < s.UpdatedAt || *c.RoundsStarted != s.RoundsStarted:
		return fmt.Errorf("goal %s does not preserve the current counters and timestamps", op)
	case op != OpEdit && (next.Objective != cur.Objective || next.MaxGoalRounds != cur.MaxGoalRounds):
		return fmt.Errorf("goal %s cannot change objective or maxGoalRounds", op)
	}
	ok := true
	switch op {
	case OpEdit:
		ok = next.Phase == cur.Phase && sameReason(next.BlockedReason, cur.BlockedReason)
	case OpPause:
		ok = cur.Phase == PhaseActive && next.Phase == PhasePaused
	case OpResume:
		ok = cur.Phase != PhaseComplete && next.Phase == PhaseActive && s.RoundsStarted < next.MaxGoalRounds
	case OpComplete:
		ok = cur.Phase != PhaseComplete && next.Phase == PhaseComplete
	case OpBlock:
		ok = cur.Phase == PhaseActive && next.Phase == PhaseBlocked
	}
	if !ok {
		return fmt.Errorf("goal %s has an invalid phase transition", op)
	}
	return nil
}

func sameReason(a, b *BlockReason) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// SafeInteger reports whether v is a JavaScript safe integer.
func SafeInteger(v float64) bool {
	return v == math.Trunc(v) && math.Abs(v) <= 1<<53-1
}
