package llm

import (
	"encoding/json"
	"math"
	"slices"
	"time"
)

// Retry modes.
const (
	RetryNormal = "normal"
	RetryAlways = "always"
)

// RetryPolicy is a provider's retry policy.
type RetryPolicy struct {
	// Mode is normal (bounded, by code) or always (every failure, unbounded).
	Mode string
	// MaxRetries bounds the retries of one step (normal mode).
	MaxRetries int
	// RetryableCodes are the failure codes retried (normal mode).
	RetryableCodes []string
	// InitialDelayMs, MaxDelayMs and JitterRatio shape the backoff.
	InitialDelayMs, MaxDelayMs, JitterRatio float64
}

// DefaultRetryPolicy is upstream's live default: normal mode, 5 retries of
// EMPTY_RESPONSE, RATE_LIMIT, SERVER, TIMEOUT and TRANSPORT, 500 ms doubling
// up to 10 s, jitter ±10%.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Mode: RetryNormal, MaxRetries: 5,
		RetryableCodes: []string{"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"},
		InitialDelayMs: 500, MaxDelayMs: 10_000, JitterRatio: 0.1}
}

// Key is the policy key upstream's llm/retry event carries: the JSON of
// [mode, maxRetries, sorted codes, initialDelayMs, maxDelayMs, jitterRatio]
// (always mode: [mode, initialDelayMs, maxDelayMs, jitterRatio]).
func (p RetryPolicy) Key() string {
	var v []any
	if p.Mode == RetryAlways {
		v = []any{p.Mode, p.InitialDelayMs, p.MaxDelayMs, p.JitterRatio}
	} else {
		codes := slices.Clone(p.RetryableCodes)
		slices.Sort(codes)
		v = []any{p.Mode, p.MaxRetries, codes, p.InitialDelayMs, p.MaxDelayMs, p.JitterRatio}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Decide says whether a failure of code, with the provider's Retry-After
// of retryAfterMs (0: none), is retried after previous retries of the same
// step, and after what delay in ms; random is a draw in [0, 1) for the
// jitter. A Retry-After is any finite positive number of ms, a fraction
// too (upstream's llm-retry); anything else is none. Pure.
func (p RetryPolicy) Decide(code string, retryAfterMs float64, previous int, random float64) (delayMs float64, retry bool) {
	if p.Mode != RetryAlways {
		if !slices.Contains(p.RetryableCodes, code) || previous >= p.MaxRetries {
			return 0, false
		}
	}
	n := previous + 1
	if after := retryAfterMs; after > 0 && !math.IsInf(after, 1) {
		if after <= p.MaxDelayMs {
			return after, true
		}
		if p.Mode != RetryAlways {
			return 0, false
		}
	}
	exp := math.Min(p.InitialDelayMs*math.Pow(2, float64(min(n-1, 1024))), p.MaxDelayMs)
	jitter := 1 - p.JitterRatio + 2*p.JitterRatio*random
	return math.Min(exp*jitter, p.MaxDelayMs), true
}

// Duration converts a delay in ms.
func Duration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
