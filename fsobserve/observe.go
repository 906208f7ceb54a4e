package fsobserve

import (
	"sync"
)

// Observation is what one session last saw of one target: present at a
// version, or absent. A target the session never saw has no Observation.
type Observation struct {
	// Present is true when the target was a readable file.
	Present bool
	// Version is the provider version token when Present.
	Version string
}

// Present returns a present-at-version observation.
func Present(version string) Observation { return Observation{Present: true, Version: version} }

// Absent returns the absent observation.
func Absent() Observation { return Observation{} }

// IntentKind is the guard a write carries to the provider.
type IntentKind int

const (
	// Unguarded writes unconditionally (no observation policy composed).
	Unguarded IntentKind = iota
	// CreateIfAbsent creates the file and refuses if it exists (FS_NOT_OBSERVED).
	CreateIfAbsent
	// ReplaceIfVersion replaces the file only while it is at Version.
	ReplaceIfVersion
)

// String names the kind as upstream does.
func (k IntentKind) String() string {
	switch k {
	case CreateIfAbsent:
		return "createIfAbsent"
	case ReplaceIfVersion:
		return "replaceIfVersion"
	default:
		return "unguarded"
	}
}

// WriteIntent is the write guard: a kind and, for ReplaceIfVersion, the version.
type WriteIntent struct {
	Kind    IntentKind
	Version string
}

// EditGuard is the edit guard: the edit applies only while the file is at Version.
type EditGuard struct {
	Version string
}

// --8<-- [start:intents]
// DecideWrite is the write-intent decision (pure): a target seen present at v
// may be replaced at v; anything else (no owner, unseen, absent) may only be
// created. owned is false when the call has no session.
func DecideWrite(owned bool, obs Observation, seen bool) WriteIntent {
	if owned && seen && obs.Present {
		return WriteIntent{Kind: ReplaceIfVersion, Version: obs.Version}
	}
	return WriteIntent{Kind: CreateIfAbsent}
}

// DecideEdit is the edit-intent decision (pure): a target seen present at v
// gives the guard {v}; seen absent refuses with FS_NOT_FOUND; unseen or no
// owner refuses with FS_NOT_OBSERVED. display is the display path for messages.
func DecideEdit(owned bool, obs Observation, seen bool, display string) (EditGuard, error) {
	switch {
	case !owned || !seen:
		return EditGuard{}, Errorf(CodeNotObserved, "edit requires reading %q first", display)
	case !obs.Present:
		return EditGuard{}, Errorf(CodeNotFound, "cannot edit %q: not found", display)
	default:
		return EditGuard{Version: obs.Version}, nil
	}
}

// --8<-- [end:intents]

// Observations is the per-session record of what each session has seen,
// keyed by session id then target key. It is in memory only: a resumed session
// starts empty. The empty session id ("no owner") records nothing and
// authorizes nothing. Safe for concurrent use.
type Observations struct {
	mu sync.Mutex
	m  map[string]map[string]Observation
}

// NewObservations returns an empty record.
func NewObservations() *Observations {
	return &Observations{m: map[string]map[string]Observation{}}
}

// Record stores what session saw of key. An empty session records nothing.
func (o *Observations) Record(session, key string, obs Observation) {
	if session == "" || key == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]map[string]Observation{}
	}
	byKey := o.m[session]
	if byKey == nil {
		byKey = map[string]Observation{}
		o.m[session] = byKey
	}
	byKey[key] = obs
}

// Lookup returns what session saw of key; seen is false for an unseen target
// or an empty session.
func (o *Observations) Lookup(session, key string) (obs Observation, seen bool) {
	if session == "" {
		return Observation{}, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	obs, seen = o.m[session][key]
	return obs, seen
}

// WriteIntent decides the guard of a write by session to key (see DecideWrite).
func (o *Observations) WriteIntent(session, key string) WriteIntent {
	obs, seen := o.Lookup(session, key)
	return DecideWrite(session != "", obs, seen)
}

// EditIntent decides the guard of an edit by session to key (see DecideEdit).
func (o *Observations) EditIntent(session, key, display string) (EditGuard, error) {
	obs, seen := o.Lookup(session, key)
	return DecideEdit(session != "", obs, seen, display)
}

// Forget drops everything session saw.
func (o *Observations) Forget(session string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, session)
}

// Reset drops every session's observations (upstream: plugin disposal).
func (o *Observations) Reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.m = map[string]map[string]Observation{}
}
