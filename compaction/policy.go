package compaction

import (
	"fmt"
	"math"
)

// ModelPolicy is one exact-route override (upstream's modelPolicies
// entry): the provider and model it applies to, and the policy fields it
// replaces (absent: the top level's).
type ModelPolicy struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Config
}

// resolveOverrides validates the model policies as upstream does at load,
// in order: each one's route and fields, no route twice, and each one's
// retained ratio below its threshold ratio (its own or inherited from
// top). Pure.
func resolveOverrides(mps []ModelPolicy, top Policy) ([]ModelPolicy, error) {
	seen := map[Target]bool{}
	for i, mp := range mps {
		prefix := fmt.Sprintf("modelPolicies[%d].", i)
		switch {
		case mp.ModelPolicies != nil:
			return nil, &ConfigError{prefix + "modelPolicies", "unknown key"}
		case mp.Auto != nil:
			return nil, &ConfigError{prefix + "auto", "unknown key"}
		case mp.Provider == "":
			return nil, &ConfigError{prefix + "provider", "must be a non-empty string"}
		case mp.Model == "":
			return nil, &ConfigError{prefix + "model", "must be a non-empty string"}
		}
		if err := validateIn(prefix, mp.Config); err != nil {
			return nil, err
		}
		route := Target{mp.Provider, mp.Model}
		if seen[route] {
			return nil, &ConfigError{fmt.Sprintf("modelPolicies[%d]", i), fmt.Sprintf("duplicate model policy for %s/%s", mp.Provider, mp.Model)}
		}
		seen[route] = true
	}
	out := make([]ModelPolicy, len(mps))
	for i, mp := range mps {
		out[i] = mp
		if err := ratioRetention(fmt.Sprintf("modelPolicies[%d].", i), top.merge(mp.Config)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// For is the policy of one routed target (upstream's resolveTargetPolicy):
// the override naming exactly that provider and model, merged field by
// field over the top level (a retention form replaces the inherited one
// whole; an empty summarization pair clears the route). Pure.
func (p Policy) For(route Target) Policy {
	out := p
	for _, mp := range p.overrides {
		if mp.Provider == route.Provider && mp.Model == route.Model {
			out = p.merge(mp.Config)
			break
		}
	}
	out.Route = route
	return out
}

// merge is p with the fields c states replacing its own.
func (p Policy) merge(c Config) Policy {
	out := p
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	if c.ThresholdRatio != nil {
		out.ThresholdRatio = *c.ThresholdRatio
	}
	switch {
	case c.RetainTokens != nil:
		n := *c.RetainTokens
		out.RetainTokens = &n
	case c.RetainRatio != nil:
		out.RetainRatio, out.RetainTokens = *c.RetainRatio, nil
	}
	if c.SummarizationProvider != nil {
		out.Summarization = Target{Provider: *c.SummarizationProvider, Model: *c.SummarizationModel}
	}
	set(&out.MaxTokens, c.MaxTokens)
	set(&out.CompactionRetries, c.CompactionRetries)
	set(&out.MaxOverflowRetries, c.MaxOverflowRetries)
	return out
}

// Spec is a routed policy scaled to its model's context window (upstream's
// resolveCompactSpec): the pressure threshold and the retained tail in
// tokens.
type Spec struct {
	ContextWindow   int
	ThresholdTokens int
	RetainTokens    int
}

// SpecError is a pressure configuration that fails for one route (no or
// an invalid context window, a tail not below the threshold); upstream
// warns of it once per route and lets the turn go on.
type SpecError struct {
	Route Target
	Msg   string
}

func (e *SpecError) Error() string { return e.Msg }

// Spec scales the policy (its Route set by [Policy.For]) to window:
// threshold floor(window*thresholdRatio), tail retainTokens or
// floor(window*retainRatio), the tail strictly below the threshold. Pure.
func (p Policy) Spec(window int) (Spec, error) {
	if window <= 0 {
		return Spec{}, &SpecError{p.Route, fmt.Sprintf("BasicCompactionConfig: contextWindow (%d) must be a positive integer", window)}
	}
	s := Spec{ContextWindow: window, ThresholdTokens: int(math.Floor(float64(window) * p.ThresholdRatio))}
	if p.RetainTokens != nil {
		s.RetainTokens = *p.RetainTokens
	} else {
		s.RetainTokens = int(math.Floor(float64(window) * p.RetainRatio))
	}
	if s.RetainTokens >= s.ThresholdTokens {
		return Spec{}, &SpecError{p.Route, fmt.Sprintf("BasicCompactionConfig: %s/%s retainTokens (%d) must be less than threshold tokens %d",
			p.Route.Provider, p.Route.Model, s.RetainTokens, s.ThresholdTokens)}
	}
	return s, nil
}
