package replay

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// Upstream's retry policy defaults (llm retry-policy).
const (
	defaultMaxRetries     = 5
	defaultInitialDelayMs = 500.0
	defaultMaxDelayMs     = 10000.0
	defaultJitterRatio    = 0.1
)

// defaultRetryableCodes are the failure codes a normal policy retries by default.
var defaultRetryableCodes = []string{"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"}

// retryPolicy is a resolved retry policy (upstream's llm-retry).
type retryPolicy struct {
	mode          string
	maxRetries    int
	codes         []string
	initial, max  float64
	jitter        float64
	random        func() float64
	retriesByStep map[[2]int]retryState
}

type retryState struct {
	id    string
	count int
}

// newRetryPolicy resolves a recording's retryPolicy setting (nil: no policy).
func newRetryPolicy(p *recording.RetryPolicy) *retryPolicy {
	if p == nil {
		return nil
	}
	r := &retryPolicy{mode: p.Mode, maxRetries: defaultMaxRetries, codes: defaultRetryableCodes,
		initial: defaultInitialDelayMs, max: defaultMaxDelayMs, jitter: defaultJitterRatio,
		random: rand.Float64, retriesByStep: map[[2]int]retryState{}}
	if p.MaxRetries != nil {
		r.maxRetries = *p.MaxRetries
	}
	if p.RetryableCodes != nil {
		r.codes = p.RetryableCodes
	}
	if b := p.Backoff; b != nil {
		if b.InitialDelayMs != nil {
			r.initial = *b.InitialDelayMs
		}
		if b.MaxDelayMs != nil {
			r.max = *b.MaxDelayMs
		}
		if b.JitterRatio != nil {
			r.jitter = *b.JitterRatio
		}
	}
	return r
}

// key is upstream's policyKey: the JSON of the policy's identity.
func (r *retryPolicy) key() string {
	var v []any
	if r.mode == recording.RetryAlways {
		v = []any{r.mode, r.initial, r.max, r.jitter}
	} else {
		v = []any{r.mode, r.maxRetries, slices.Sorted(slices.Values(r.codes)), r.initial, r.max, r.jitter}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// retryData is llm/retry's data, fields in upstream's order (maxRetries
// only in normal mode).
type retryData struct {
	RetryID    string          `json:"retryId"`
	Turn       int             `json:"turn"`
	Step       int             `json:"step"`
	Provider   string          `json:"provider"`
	Mode       string          `json:"mode"`
	PolicyKey  string          `json:"policyKey"`
	Retry      int             `json:"retry"`
	MaxRetries *int            `json:"maxRetries,omitempty"`
	DelayMs    float64         `json:"delayMs"`
	Failure    json.RawMessage `json:"failure"`
}

type retryStartedData struct {
	RetryID string `json:"retryId"`
	Turn    int    `json:"turn"`
	Step    int    `json:"step"`
	Retry   int    `json:"retry"`
}

// decide says whether the failure of turn's step is retried and returns the
// llm/retry event's data (nil: not retried, the turn fails): its code must
// be retryable (normal mode), the step's retries under this policy below
// maxRetries, and a provider Retry-After within the maximum delay (normal
// mode; "always" then uses its own delay).
func (r *retryPolicy) decide(turn, step int, provider string, failure map[string]any) *retryData {
	if r == nil {
		return nil
	}
	code, _ := failure["code"].(string)
	if r.mode != recording.RetryAlways && !slices.Contains(r.codes, code) {
		return nil
	}
	prior := r.retriesByStep[[2]int{turn, step}]
	if r.mode != recording.RetryAlways && prior.count >= r.maxRetries {
		return nil
	}
	retry := prior.count + 1
	id := prior.id
	if id == "" {
		id = newUUID()
	}
	delay := r.delay(retry)
	if after, ok := failure["providerRetryAfterMs"].(float64); ok && after > 0 && !math.IsInf(after, 0) {
		switch {
		case after <= r.max:
			delay = after
		case r.mode != recording.RetryAlways:
			return nil
		}
	}
	r.retriesByStep[[2]int{turn, step}] = retryState{id: id, count: retry}
	d := &retryData{RetryID: id, Turn: turn, Step: step, Provider: provider, Mode: r.mode, PolicyKey: r.key(), Retry: retry, DelayMs: delay, Failure: ordered(failure)}
	if r.mode != recording.RetryAlways {
		d.MaxRetries = &r.maxRetries
	}
	return d
}

// delay is the local backoff: min(initial·2^(retry-1), max) times the
// jitter factor 1-j+2j·random, at most max.
func (r *retryPolicy) delay(retry int) float64 {
	exp := math.Min(r.initial*math.Pow(2, float64(min(retry-1, 1024))), r.max)
	jitter := 1 - r.jitter + 2*r.jitter*r.random()
	return math.Min(exp*jitter, r.max)
}
