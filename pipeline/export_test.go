package pipeline

// HookCounts reports how many registrations of every kind the registry holds,
// global and scoped (test-only).
func (r *Registry) HookCounts() (global, scoped int) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, tags := range [][]*Scope{tagsOf(r.pre), tagsOf(r.guards), tagsOf(r.wrappers), tagsOf(r.post), tagsOf(r.observers), tagsOf(r.masks)} {
		for _, tag := range tags {
			if tag == nil {
				global++
			} else {
				scoped++
			}
		}
	}
	return global, scoped
}

func tagsOf[F any](list []hook[F]) []*Scope {
	out := make([]*Scope, len(list))
	for i, h := range list {
		out[i] = h.scope
	}
	return out
}

// Registrations reports how many registrations s owns (test-only).
func (s *Scope) Registrations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.owned)
}
