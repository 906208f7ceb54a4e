package compaction

import (
	"fmt"
	"math"
)

// Upstream's defaults (dsh-compaction-basic).
const (
	DefaultThresholdRatio     = 0.8
	DefaultRetainRatio        = 0.16
	DefaultMaxTokens          = 8192
	DefaultCompactionRetries  = 1
	DefaultMaxOverflowRetries = 1
)

// Config is upstream's BasicCompactionConfig as a composition states it;
// an absent field keeps upstream's default.
type Config struct {
	// ThresholdRatio is the share of the context window at which the
	// pressure check compacts, in (0, 1].
	ThresholdRatio *float64 `json:"thresholdRatio,omitempty"`
	// RetainRatio is the share of the context window kept verbatim at the
	// tail, in (0, 1] and below the threshold ratio; RetainTokens the same
	// as a token count (one of the two).
	RetainRatio  *float64 `json:"retainRatio,omitempty"`
	RetainTokens *int     `json:"retainTokens,omitempty"`
	// SummarizationProvider and SummarizationModel route the summary call
	// (both or neither; empty: the conversation's route).
	SummarizationProvider *string `json:"summarizationProvider,omitempty"`
	SummarizationModel    *string `json:"summarizationModel,omitempty"`
	// MaxTokens is the summary call's token cap (>= 1).
	MaxTokens *int `json:"maxTokens,omitempty"`
	// CompactionRetries bounds the extra attempts of a pressure compaction
	// still above the threshold (>= 0).
	CompactionRetries *int `json:"compactionRetries,omitempty"`
	// MaxOverflowRetries bounds the context-overflow recoveries between two
	// assistant messages (>= 0).
	MaxOverflowRetries *int `json:"maxOverflowRetries,omitempty"`
	// ModelPolicies override the fields above for one exact provider/model
	// route each ([Policy.For]); only the top level has them.
	ModelPolicies []ModelPolicy `json:"modelPolicies,omitempty"`
	// Auto false leaves automatic compaction (pressure and overflow) off;
	// only the top level has it.
	Auto *bool `json:"auto,omitempty"`
}

// Policy is a resolved configuration: the defaults of every route, and
// the exact-route overrides [Policy.For] merges over them. Its ratios
// scale with the routed model's context window ([Policy.Spec]).
type Policy struct {
	ThresholdRatio float64
	// RetainRatio applies when RetainTokens is nil.
	RetainRatio        float64
	RetainTokens       *int
	Summarization      Target
	MaxTokens          int
	CompactionRetries  int
	MaxOverflowRetries int
	Auto               bool
	// Route is the routed target [Policy.For] resolved the policy for
	// (empty: the top level's).
	Route Target
	// overrides are the validated modelPolicies, in order.
	overrides []ModelPolicy
}

// Target is a provider/model route.
type Target struct {
	Provider string
	Model    string
}

// ConfigError is a configuration upstream refuses at load: the field and
// why, in upstream's words.
type ConfigError struct {
	Field   string
	Problem string
}

func (e *ConfigError) Error() string { return e.Field + ": " + e.Problem }

// Resolve validates c as upstream does at plugin load and applies the
// defaults. Pure.
func Resolve(c Config) (Policy, error) {
	if err := validate(c); err != nil {
		return Policy{}, err
	}
	p := Policy{ThresholdRatio: DefaultThresholdRatio, RetainRatio: DefaultRetainRatio, MaxTokens: DefaultMaxTokens,
		CompactionRetries: DefaultCompactionRetries, MaxOverflowRetries: DefaultMaxOverflowRetries, Auto: true}
	setF := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	setI := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setF(&p.ThresholdRatio, c.ThresholdRatio)
	setF(&p.RetainRatio, c.RetainRatio)
	setI(&p.MaxTokens, c.MaxTokens)
	setI(&p.CompactionRetries, c.CompactionRetries)
	setI(&p.MaxOverflowRetries, c.MaxOverflowRetries)
	if c.RetainTokens != nil {
		n := *c.RetainTokens
		p.RetainTokens = &n
	}
	if c.SummarizationProvider != nil {
		p.Summarization = Target{Provider: *c.SummarizationProvider, Model: *c.SummarizationModel}
	}
	if c.Auto != nil {
		p.Auto = *c.Auto
	}
	if err := ratioRetention("", p); err != nil {
		return Policy{}, err
	}
	overrides, err := resolveOverrides(c.ModelPolicies, p)
	if err != nil {
		return Policy{}, err
	}
	p.overrides = overrides
	return p, nil
}

// ratioRetention refuses a retained ratio not below the threshold ratio
// (upstream's capacity-independent check at load); prefix names the scope.
func ratioRetention(prefix string, p Policy) error {
	if p.RetainTokens == nil && p.RetainRatio >= p.ThresholdRatio {
		return &ConfigError{prefix + "retainRatio", fmt.Sprintf("(%v) must be less than the resolved thresholdRatio (%v)", p.RetainRatio, p.ThresholdRatio)}
	}
	return nil
}

// validate checks each field that is present, in upstream's order.
func validate(c Config) error { return validateIn("", c) }

// validateIn checks each field of one scope (the top level, prefix "", or
// a model policy, prefix "modelPolicies[i].") that is present.
func validateIn(prefix string, c Config) error {
	ratio := func(name string, v *float64) error {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v <= 0 || *v > 1) {
			return &ConfigError{prefix + name, fmt.Sprintf("(%v) must be a number in (0, 1]", *v)}
		}
		return nil
	}
	atLeast := func(name string, v *int, min int) error {
		if v != nil && *v < min {
			what := "a non-negative integer"
			if min == 1 {
				what = "a positive integer"
			}
			return &ConfigError{prefix + name, fmt.Sprintf("(%d) must be %s", *v, what)}
		}
		return nil
	}
	for _, err := range []error{
		ratio("thresholdRatio", c.ThresholdRatio), ratio("retainRatio", c.RetainRatio),
		atLeast("retainTokens", c.RetainTokens, 0),
	} {
		if err != nil {
			return err
		}
	}
	if c.RetainRatio != nil && c.RetainTokens != nil {
		return &ConfigError{prefix + "retainTokens", "retainRatio and retainTokens are mutually exclusive"}
	}
	for _, err := range []error{
		atLeast("maxTokens", c.MaxTokens, 1), atLeast("compactionRetries", c.CompactionRetries, 0),
		atLeast("maxOverflowRetries", c.MaxOverflowRetries, 0),
	} {
		if err != nil {
			return err
		}
	}
	p, m := c.SummarizationProvider, c.SummarizationModel
	if (p == nil) != (m == nil) || (p != nil && (*p == "") != (*m == "")) {
		return &ConfigError{prefix + "summarizationModel", "summarizationProvider and summarizationModel must be set together as an empty or non-empty pair"}
	}
	return nil
}
