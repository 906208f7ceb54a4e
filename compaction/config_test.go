package compaction

import (
	"errors"
	"math"
	"testing"
)

func f(v float64) *float64 { return &v }
func n(v int) *int         { return &v }
func s(v string) *string   { return &v }

// TestResolve: upstream's load-time checks, each at its boundary, and the
// defaults an absent field keeps.
func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     Config
		field string // "" resolves
		want  func(Policy) bool
	}{
		{"defaults", Config{}, "", func(p Policy) bool {
			return p.ThresholdRatio == 0.8 && p.RetainRatio == 0.16 && p.RetainTokens == nil && p.MaxTokens == 8192 &&
				p.CompactionRetries == 1 && p.MaxOverflowRetries == 1 && p.Auto && p.Summarization == Target{}
		}},
		{"the recording's overlay", Config{ThresholdRatio: f(0.99), RetainTokens: n(20), MaxTokens: n(32)}, "", func(p Policy) bool {
			return p.ThresholdRatio == 0.99 && *p.RetainTokens == 20 && p.MaxTokens == 32
		}},
		{"a ratio of 1 is in (0, 1]", Config{ThresholdRatio: f(1)}, "", nil},
		{"a ratio above 1", Config{ThresholdRatio: f(1.0000001)}, "thresholdRatio", nil},
		{"a ratio of 0", Config{RetainRatio: f(0)}, "retainRatio", nil},
		{"a ratio that is not a number", Config{ThresholdRatio: f(math.NaN())}, "thresholdRatio", nil},
		{"retainTokens 0", Config{RetainTokens: n(0)}, "", nil},
		{"retainTokens below 0", Config{RetainTokens: n(-1)}, "retainTokens", nil},
		{"both retention forms", Config{RetainRatio: f(0.1), RetainTokens: n(5)}, "retainTokens", nil},
		{"maxTokens 1", Config{MaxTokens: n(1)}, "", nil},
		{"maxTokens 0", Config{MaxTokens: n(0)}, "maxTokens", nil},
		{"compactionRetries 0", Config{CompactionRetries: n(0)}, "", func(p Policy) bool { return p.CompactionRetries == 0 }},
		{"compactionRetries below 0", Config{CompactionRetries: n(-1)}, "compactionRetries", nil},
		{"maxOverflowRetries 0", Config{MaxOverflowRetries: n(0)}, "", func(p Policy) bool { return p.MaxOverflowRetries == 0 }},
		{"maxOverflowRetries below 0", Config{MaxOverflowRetries: n(-1)}, "maxOverflowRetries", nil},
		{"a summarization provider alone", Config{SummarizationProvider: s("p")}, "summarizationModel", nil},
		{"an empty and a non-empty summarization half", Config{SummarizationProvider: s("p"), SummarizationModel: s("")}, "summarizationModel", nil},
		{"a summarization pair", Config{SummarizationProvider: s("p"), SummarizationModel: s("m")}, "", func(p Policy) bool {
			return p.Summarization == Target{"p", "m"}
		}},
		{"retainRatio equal to the threshold", Config{ThresholdRatio: f(0.5), RetainRatio: f(0.5)}, "retainRatio", nil},
		{"retainRatio just below the threshold", Config{ThresholdRatio: f(0.5), RetainRatio: f(0.49)}, "", nil},
		{"the default retainRatio above a lower threshold", Config{ThresholdRatio: f(0.1)}, "retainRatio", nil},
		{"retainTokens lifts the ratio rule", Config{ThresholdRatio: f(0.1), RetainTokens: n(1)}, "", nil},
		{"auto off", Config{Auto: new(bool)}, "", func(p Policy) bool { return !p.Auto }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkResolve(t, tc.c, tc.field, tc.want, func(p Policy) Policy { return p })
		})
	}
}

// checkResolve resolves c: field "" wants a policy, of which pick's view
// satisfies want (when set); else a ConfigError of that field.
func checkResolve(t *testing.T, c Config, field string, want func(Policy) bool, pick func(Policy) Policy) {
	t.Helper()
	p, err := Resolve(c)
	var ce *ConfigError
	switch {
	case field == "" && err != nil:
		t.Fatalf("Resolve = %v, want a policy", err)
	case field != "" && (!errors.As(err, &ce) || ce.Field != field):
		t.Fatalf("Resolve = %v, want a ConfigError of field %s", err, field)
	case want != nil && !want(pick(p)):
		t.Errorf("policy %+v", pick(p))
	}
}
