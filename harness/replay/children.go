package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/stack"
)

// family is the replay's delegated children: the id, the loop and the
// script each child gets, and which recorded child log (session.<n>.jsonl)
// it is compared with.
//
// Binding is deterministic. A new child of a session reserves the first
// recorded child of that session's recorded counterpart not yet reserved
// (recorded children are numbered by their creation), and takes its id
// (ids are labels: every UUID compares as {{sessionId}}; the recorded id
// lets a script that names a child, send_message to it, address ours). At
// its first model call a child whose first prompt is not its reservation's
// takes a not-yet-started sibling's reservation whose prompt is: children
// that upstream started concurrently may be numbered in either order, and
// are then matched as a set, by their task.
type family struct {
	rec      *recording.Recording
	base     context.Context
	config   driverConfig // what every child's driver shares
	info     ModelInfo
	newMod   func(script *recording.Script) *scriptedModel
	hooks    func(m *member) agentHooks
	onDriver func(d *driver)
	root     *driver

	mu       sync.Mutex
	members  []*member          // in creation order
	byID     map[string]*member // our child session id → member
	reserved map[int]*member    // recorded index → member
	indexOf  map[string]int     // our session id → recorded index (0: the session)
	models   map[int]*scriptedModel
}

// member is one child of the replay.
type member struct {
	index   int // the recorded child it is bound to (0: none)
	child   *stack.Child
	driver  *driver
	prompt  string // its task (the first prompt it was given)
	started bool   // it made a model call (its binding is fixed)
}

func newFamily(rec *recording.Recording, rootID string) *family {
	return &family{rec: rec, byID: map[string]*member{}, reserved: map[int]*member{}, indexOf: map[string]int{rootID: 0}, models: map[int]*scriptedModel{}}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// recordedParent is the recorded id of the session our parent is bound to
// ("" when it is bound to none).
func (f *family) recordedParentLocked(parent *pipeline.Agent) (string, bool) {
	if parent == nil || parent.Session == nil {
		return "", false
	}
	i, ok := f.indexOf[parent.Session.ID()]
	switch {
	case !ok:
		return "", false
	case i == 0:
		return f.rec.Header.ID, true
	}
	return f.rec.Children[i-1].Header.ID, true
}

// NewID names a new child of parent: it reserves the parent's next
// recorded child and takes its id (a fresh UUID when there is none, or its
// id is not a UUID or is taken).
func (f *family) NewID(parent *pipeline.Agent) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := &member{}
	id := ""
	if pid, ok := f.recordedParentLocked(parent); ok {
		for _, c := range f.rec.Children {
			if c.Header.ParentSession == pid && f.reserved[c.Index] == nil {
				m.index = c.Index
				f.reserved[c.Index] = m
				if uuidRE.MatchString(c.Header.ID) && f.byID[c.Header.ID] == nil {
					id = c.Header.ID
				}
				break
			}
		}
	}
	if id == "" {
		id = newUUID()
	}
	f.byID[id] = m
	f.members = append(f.members, m)
	if m.index > 0 {
		f.indexOf[id] = m.index
	}
	return id
}

// Start starts the loop of a new or cold-resumed child ([stack.Loops]).
func (f *family) Start(c *stack.Child) (stack.Loop, error) {
	id := c.Info().SessionID
	f.mu.Lock()
	m := f.byID[id]
	if m == nil { // not named by NewID (a caller that chose the id)
		m = &member{}
		f.byID[id] = m
		f.members = append(f.members, m)
	}
	m.child = c
	f.mu.Unlock()
	cfg := f.config
	cfg.label, cfg.surface, cfg.model, cfg.hooks = fmt.Sprintf("child %s", id), c, &childModel{f: f, m: m}, f.hooks(m)
	cfg.recorded = func() (recordedLog, bool) { return f.recordedLogOf(m) }
	d, err := newDriver(f.base, cfg)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	m.driver = d
	f.mu.Unlock()
	if f.onDriver != nil {
		f.onDriver(d)
	}
	if info := c.Info(); info.Continuable && !info.Resumed {
		switch parent := f.driverOf(info.ParentSession); {
		case nestedCall(info.CallID) && parent != nil:
			d.programStart.Store(true)
			d.settleWith = parent
		case parent != nil:
			parent.holdUntilYield(d)
		}
	}
	return d, nil
}

// nestedCall reports a call id of a run_code program's nested call
// (upstream's "<root call id>:code:<n>").
func nestedCall(id string) bool { return strings.Contains(id, ":code:") }

// bind fixes m's binding at its first model call: a child whose task is
// not its reservation's takes the reservation of a not-yet-started sibling
// whose task it is.
func (f *family) bind(m *member) *scriptedModel {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !m.started {
		m.started = true
		m.prompt = m.driver.task()
		if m.index == 0 || (!f.rec.Children[m.index-1].ScriptOnly && f.rec.Children[m.index-1].FirstPrompt() != m.prompt) {
			f.rebindLocked(m)
		}
	}
	if m.index == 0 {
		return nil
	}
	sm := f.models[m.index]
	if sm == nil {
		sm = f.newMod(f.rec.Children[m.index-1].Script)
		f.models[m.index] = sm
	}
	return sm
}

// rebindLocked swaps m's reservation with a sibling's whose task is m's.
func (f *family) rebindLocked(m *member) {
	parent := ""
	if m.index > 0 {
		parent = f.rec.Children[m.index-1].Header.ParentSession
	} else if m.child != nil {
		if i, ok := f.indexOf[m.child.Info().ParentSession]; ok {
			parent = f.rec.Header.ID
			if i > 0 {
				parent = f.rec.Children[i-1].Header.ID
			}
		}
	}
	for _, c := range f.rec.Children {
		other := f.reserved[c.Index]
		if c.Header.ParentSession != parent || c.FirstPrompt() != m.prompt || other == m || other != nil && other.started {
			continue
		}
		old := m.index
		m.index = c.Index
		f.reserved[c.Index] = m
		if other != nil {
			other.index = old
		}
		if old > 0 {
			f.reserved[old] = other
		}
		f.relabelLocked(m)
		if other != nil {
			f.relabelLocked(other)
		}
		return
	}
}

// relabelLocked records which recorded session m's id stands for.
func (f *family) relabelLocked(m *member) {
	if m.child == nil {
		return
	}
	id := m.child.Info().SessionID
	if m.index > 0 {
		f.indexOf[id] = m.index
	} else {
		delete(f.indexOf, id)
	}
}

// turnEnded reports whether the child bound to recorded index n (0: any)
// ended a turn numbered minimum or more.
func (f *family) turnEnded(n, minimum int) bool {
	f.mu.Lock()
	ms := append([]*member(nil), f.members...)
	f.mu.Unlock()
	for _, m := range ms {
		if n > 0 && m.index != n || m.driver == nil {
			continue
		}
		if m.driver.endedSince(minimum) {
			return true
		}
	}
	return false
}

// recordedLogOf is the recorded log m is bound to (false: none).
func (f *family) recordedLogOf(m *member) (recordedLog, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m.index == 0 {
		return recordedLog{}, false
	}
	c := f.rec.Children[m.index-1]
	return recordedLog{c.File, c.Events}, true
}

// driverOf is the live agent loop of our session id (the session's or a
// child's), nil when there is none.
func (f *family) driverOf(id string) *driver {
	if f.root != nil && f.root.log.ID() == id {
		return f.root
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if m := f.byID[id]; m != nil {
		return m.driver
	}
	return nil
}

// memberAt is the member bound to recorded index n.
func (f *family) memberAt(n int) *member {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.members {
		if m.index == n {
			return m
		}
	}
	return nil
}

// all returns the members in creation order.
func (f *family) all() []*member {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*member(nil), f.members...)
}

// close stops every child's loop still running (the session's disposal).
func (f *family) close() {
	for _, m := range f.all() {
		if m.driver != nil {
			m.driver.Cancel(false)
			m.driver.Close()
		}
	}
}

// childModel is a child's model: the script of the recorded child it is
// bound to at its first call.
type childModel struct {
	f *family
	m *member
}

func (c *childModel) Info() ModelInfo { return c.f.info }

func (c *childModel) Call(ctx context.Context, req ModelRequest, emit func(json.RawMessage) error) (recording.Reply, error) {
	sm := c.f.bind(c.m)
	if sm == nil {
		return recording.Reply{}, &errScriptExhausted{fmt.Sprintf(unrecordedText, len(c.f.rec.Children)+2, len(c.f.rec.Children)+1)}
	}
	return sm.Call(ctx, req, emit)
}
