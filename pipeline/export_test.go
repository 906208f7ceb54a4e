package pipeline

// HookCounts reports how many registrations of every kind the registry holds,
// global and scoped (test-only).
func (r *Registry) HookCounts() (global, scoped int) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	count := func(tag *Scope) {
		if tag == nil {
			global++
		} else {
			scoped++
		}
	}
	for _, h := range r.pre {
		count(h.scope)
	}
	for _, h := range r.guards {
		count(h.scope)
	}
	for _, h := range r.wrappers {
		count(h.scope)
	}
	for _, h := range r.post {
		count(h.scope)
	}
	for _, h := range r.observers {
		count(h.scope)
	}
	for _, h := range r.masks {
		count(h.scope)
	}
	return global, scoped
}

// Registrations reports how many registrations s owns (test-only).
func (s *Scope) Registrations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.owned)
}
