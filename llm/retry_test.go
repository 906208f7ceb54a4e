package llm

import (
	"math"
	"testing"
)

func TestDecide(t *testing.T) {
	p := DefaultRetryPolicy()
	for _, tc := range []struct {
		name     string
		f        Failure
		previous int
		random   float64
		delay    float64
		retry    bool
	}{
		{"first retry, no jitter draw", Failure{Code: "SERVER"}, 0, 0.5, 500, true},
		{"doubling, lowest jitter", Failure{Code: "SERVER"}, 2, 0, 1800, true},
		{"capped at the maximum", Failure{Code: "TRANSPORT"}, 4, 0.5, 8000, true},
		{"the bound", Failure{Code: "SERVER"}, 5, 0.5, 0, false},
		{"a code not retried", Failure{Code: "AUTH"}, 0, 0.5, 0, false},
		{"Retry-After honoured", Failure{Code: "RATE_LIMIT", ProviderRetryAfterMs: 3000}, 0, 0.9, 3000, true},
		{"Retry-After at the maximum", Failure{Code: "RATE_LIMIT", ProviderRetryAfterMs: 10000}, 0, 0.9, 10000, true},
		{"Retry-After above the maximum", Failure{Code: "RATE_LIMIT", ProviderRetryAfterMs: 10001}, 0, 0.9, 0, false},
		{"a fractional Retry-After", Failure{Code: "RATE_LIMIT", ProviderRetryAfterMs: 1.5}, 0, 0.9, 1.5, true},
		{"a Retry-After just above the maximum", Failure{Code: "RATE_LIMIT", ProviderRetryAfterMs: 10000.5}, 0, 0.9, 0, false},
		{"a negative Retry-After is none", Failure{Code: "RATE_LIMIT", ProviderRetryAfterMs: -1.5}, 0, 0.5, 500, true},
		{"an infinite Retry-After is none", Failure{Code: "RATE_LIMIT", ProviderRetryAfterMs: math.Inf(1)}, 0, 0.5, 500, true},
	} {
		delay, retry := p.Decide(tc.f.Code, tc.f.ProviderRetryAfterMs, tc.previous, tc.random)
		if retry != tc.retry || (retry && delay != tc.delay) {
			t.Errorf("%s: (%v, %v), want (%v, %v)", tc.name, delay, retry, tc.delay, tc.retry)
		}
	}
	if got := p.Key(); got != `["normal",5,["EMPTY_RESPONSE","RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"],500,10000,0.1]` {
		t.Errorf("key %s", got)
	}
}

// TestDecideAlways pins always mode: every failure is retried, whatever its
// code and however many retries came before, and a Retry-After above the
// maximum falls back to the local backoff instead of giving up (upstream's
// llm-retry recover).
func TestDecideAlways(t *testing.T) {
	p := DefaultRetryPolicy()
	p.Mode = RetryAlways
	p.MaxRetries = 2
	p.RetryableCodes = []string{"SERVER"}
	for _, tc := range []struct {
		name       string
		code       string
		retryAfter float64
		previous   int
		delay      float64
	}{
		{"a code normal mode does not retry", "AUTH", 0, 0, 500},
		{"an unknown code", "", 0, 1, 1000},
		{"past maxRetries", "SERVER", 0, 2, 2000},
		{"far past maxRetries, capped", "AUTH", 0, 1000, 10000},
		{"Retry-After honoured", "RATE_LIMIT", 3000, 7, 3000},
		{"Retry-After above the maximum: local backoff", "RATE_LIMIT", 10001, 0, 500},
	} {
		delay, retry := p.Decide(tc.code, tc.retryAfter, tc.previous, 0.5)
		if !retry || delay != tc.delay {
			t.Errorf("%s: (%v, %v), want (%v, true)", tc.name, delay, retry, tc.delay)
		}
	}
	if got := p.Key(); got != `["always",500,10000,0.1]` {
		t.Errorf("key %s", got)
	}
}
