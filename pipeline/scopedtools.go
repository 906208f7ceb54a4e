package pipeline

import "fmt"

// scopedTool is a tool registered through a scope (upstream's agent.ctx
// tools.register): it is the scope's own, visible to calls of the scope's
// agent and of agents bound below it, and goes when the scope ends.
type scopedTool struct {
	scope *Scope
	entry *toolEntry
}

// Register adds a tool to the scope's own layer: the scope's agent (and the
// agents bound below it) sees it after the global tools, a call of theirs
// reaches it, and nobody else does. The scope's own restrictions do not hide
// it (upstream exempts an agent's own tools from its own filters); an
// ancestor's do. A name already in this scope's layer is an error; a scoped
// tool shadows a global one of the same name for the scope's calls. The
// scope's own agent sees its own tools whatever the masks on its chain
// (upstream adds an agent's own tools after filtering what it inherits); an
// agent below sees them as inherited, through every mask on its chain. The
// registration ends with the scope. The global surface registers globally.
func (sc Scoped) Register(t Tool) (unregister func(), err error) {
	if sc.s == nil {
		return sc.r.Register(t)
	}
	args, err := checkTool(t)
	if err != nil {
		return nil, err
	}
	r := sc.r
	r.mu.Lock()
	for _, st := range r.scopedTools {
		if st.scope == sc.s && st.entry.tool.Name == t.Name {
			r.mu.Unlock()
			return nil, fmt.Errorf("pipeline: tool %q is already registered in %s", t.Name, sc.s)
		}
	}
	r.nextID++
	e := &toolEntry{tool: t, id: r.nextID, args: args}
	r.mu.Unlock()
	return sc.s.Own(func() func() {
		r.mu.Lock()
		r.scopedTools = append(r.scopedTools, scopedTool{scope: sc.s, entry: e})
		r.mu.Unlock()
		return func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			kept := r.scopedTools[:0:0]
			for _, st := range r.scopedTools {
				if st.entry != e {
					kept = append(kept, st)
				}
			}
			r.scopedTools = kept
		}
	})
}

// resolveLocked finds the tool a call on chain reaches by name: the nearest
// scope's own tool (the calling agent's own layer unmasked, an ancestor's
// through every mask on chain), else the global tool every mask on chain
// admits. r.mu is held.
func (r *Registry) resolveLocked(name string, chain []*Scope) (*toolEntry, bool) {
	for i, s := range chain {
		for _, st := range r.scopedTools {
			if st.scope == s && st.entry.tool.Name == name {
				return st.entry, i == 0 || r.visibleLocked(name, chain)
			}
		}
	}
	e, ok := r.tools[name]
	return e, ok && r.visibleLocked(name, chain)
}

// scopedForLocked lists the scoped tools chain sees, farthest scope first
// (each in registration order), a nearer scope's tool replacing a farther
// one of the same name. r.mu is held.
func (r *Registry) scopedForLocked(chain []*Scope) []Tool {
	var out []Tool
	index := map[string]int{}
	for i := len(chain) - 1; i >= 0; i-- {
		for _, st := range r.scopedTools {
			if st.scope != chain[i] || (i > 0 && !r.visibleLocked(st.entry.tool.Name, chain)) {
				continue
			}
			if at, ok := index[st.entry.tool.Name]; ok {
				out[at] = st.entry.tool
				continue
			}
			index[st.entry.tool.Name] = len(out)
			out = append(out, st.entry.tool)
		}
	}
	return out
}
