package compaction

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestModelPolicies: upstream's load checks of the exact-route overrides,
// each at its boundary, and the merge For makes of the one that matches.
func TestModelPolicies(t *testing.T) {
	route := Target{"p", "m"}
	mp := func(c Config) ModelPolicy { return ModelPolicy{Provider: "p", Model: "m", Config: c} }
	for _, tc := range []struct {
		name  string
		c     Config
		field string // "" resolves
		want  func(Policy) bool
	}{
		{"no override: the top level", Config{ThresholdRatio: f(0.7)}, "", func(p Policy) bool { return p.ThresholdRatio == 0.7 && p.Route == route }},
		{"an override of another model", Config{ModelPolicies: []ModelPolicy{{Provider: "p", Model: "other", Config: Config{MaxTokens: n(5)}}}}, "",
			func(p Policy) bool { return p.MaxTokens == DefaultMaxTokens }},
		{"an override of another provider", Config{ModelPolicies: []ModelPolicy{{Provider: "q", Model: "m", Config: Config{MaxTokens: n(5)}}}}, "",
			func(p Policy) bool { return p.MaxTokens == DefaultMaxTokens }},
		{"the matching override's fields", Config{MaxTokens: n(7), ModelPolicies: []ModelPolicy{mp(Config{ThresholdRatio: f(0.5), CompactionRetries: n(3), MaxOverflowRetries: n(0)})}}, "",
			func(p Policy) bool {
				return p.ThresholdRatio == 0.5 && p.CompactionRetries == 3 && p.MaxOverflowRetries == 0 && p.MaxTokens == 7 && p.RetainRatio == DefaultRetainRatio
			}},
		{"a ratio replaces inherited retainTokens", Config{RetainTokens: n(20), ModelPolicies: []ModelPolicy{mp(Config{RetainRatio: f(0.1)})}}, "",
			func(p Policy) bool { return p.RetainTokens == nil && p.RetainRatio == 0.1 }},
		{"tokens replace the inherited ratio", Config{ModelPolicies: []ModelPolicy{mp(Config{RetainTokens: n(9)})}}, "",
			func(p Policy) bool { return p.RetainTokens != nil && *p.RetainTokens == 9 }},
		{"an empty pair clears the summarization route", Config{SummarizationProvider: s("a"), SummarizationModel: s("b"),
			ModelPolicies: []ModelPolicy{mp(Config{SummarizationProvider: s(""), SummarizationModel: s("")})}}, "",
			func(p Policy) bool { return p.Summarization == Target{} }},
		{"an empty provider", Config{ModelPolicies: []ModelPolicy{{Model: "m"}}}, "modelPolicies[0].provider", nil},
		{"an empty model", Config{ModelPolicies: []ModelPolicy{{Provider: "p"}}}, "modelPolicies[0].model", nil},
		{"a nested modelPolicies", Config{ModelPolicies: []ModelPolicy{mp(Config{ModelPolicies: []ModelPolicy{}})}}, "modelPolicies[0].modelPolicies", nil},
		{"auto in an override", Config{ModelPolicies: []ModelPolicy{mp(Config{Auto: new(bool)})}}, "modelPolicies[0].auto", nil},
		{"an override's field checked", Config{ModelPolicies: []ModelPolicy{mp(Config{}), {Provider: "p", Model: "n", Config: Config{MaxTokens: n(0)}}}}, "modelPolicies[1].maxTokens", nil},
		{"the same route twice", Config{ModelPolicies: []ModelPolicy{mp(Config{}), mp(Config{})}}, "modelPolicies[1]", nil},
		{"an override's ratio at the inherited threshold", Config{ThresholdRatio: f(0.5), ModelPolicies: []ModelPolicy{mp(Config{RetainRatio: f(0.5)})}}, "modelPolicies[0].retainRatio", nil},
		{"an override's threshold at the inherited ratio", Config{ModelPolicies: []ModelPolicy{mp(Config{ThresholdRatio: f(0.16)})}}, "modelPolicies[0].retainRatio", nil},
		{"an override's threshold just above the inherited ratio", Config{ModelPolicies: []ModelPolicy{mp(Config{ThresholdRatio: f(0.17)})}}, "",
			func(p Policy) bool { return p.ThresholdRatio == 0.17 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkResolve(t, tc.c, tc.field, tc.want, func(p Policy) Policy { return p.For(route) })
		})
	}
}

// TestSpec: the policy scaled to a context window: floors, the tail
// against the threshold at its boundary, and a window that is no window.
func TestSpec(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        Config
		window   int
		want     Spec
		specFail bool
	}{
		{"upstream's defaults", Config{}, 128000, Spec{128000, 102400, 20480}, false},
		{"thresholds floor", Config{ThresholdRatio: f(0.99), RetainTokens: n(20)}, 1001, Spec{1001, 990, 20}, false},
		{"ratios floor", Config{}, 9, Spec{9, 7, 1}, false},
		{"a tail equal to the threshold", Config{ThresholdRatio: f(0.5), RetainTokens: n(50)}, 100, Spec{}, true},
		{"a tail one below the threshold", Config{ThresholdRatio: f(0.5), RetainTokens: n(49)}, 100, Spec{100, 50, 49}, false},
		{"a window of 0", Config{}, 0, Spec{}, true},
		{"a negative window", Config{}, -5, Spec{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Resolve(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.For(Target{"p", "m"}).Spec(tc.window)
			var se *SpecError
			if tc.specFail != (err != nil) || (err != nil && (!errors.As(err, &se) || se.Route != Target{"p", "m"})) {
				t.Fatalf("Spec = %+v, %v", got, err)
			}
			if got != tc.want {
				t.Errorf("Spec = %+v, want %+v", got, tc.want)
			}
			if tc.window <= 0 && (err == nil || !strings.Contains(err.Error(), "contextWindow ("+strconv.Itoa(tc.window)+") must be a positive integer")) {
				t.Errorf("Spec(%d) = %v, want the window refused", tc.window, err)
			}
		})
	}
}
