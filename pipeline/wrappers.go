package pipeline

import (
	"context"
	"errors"
	"sync"
	"time"
)

var errDeadline = errors.New("tool call deadline")

// Timeout returns an execute wrapper that gives the rest of the chain d to
// finish. On its own expiry (not the caller's) the call ends with the VERBATIM
// `tool call timed out after <ms>ms` (ToolTimeoutError/TOOL_TIMEOUT); the
// body's context is cancelled, and a late body result is discarded. Register
// it outside a retry wrapper to bound the whole retry, inside to bound each
// attempt.
func Timeout(d time.Duration) Wrapper {
	return func(ctx context.Context, call *Call, next func(context.Context) (Result, error)) (Result, error) {
		tctx, cancel := context.WithTimeoutCause(ctx, d, errDeadline)
		defer cancel()
		type answer struct {
			res Result
			err error
		}
		done := make(chan answer, 1)
		go func() {
			var a answer
			defer func() { done <- a }()
			a.err = contain("tools/execute", func() (err error) {
				a.res, err = next(tctx)
				return err
			})
		}()
		select {
		case a := <-done:
			if ctx.Err() == nil && errors.Is(context.Cause(tctx), errDeadline) && (a.err != nil || !a.res.IsError || aborted(a.res)) {
				return ErrorResult(TimeoutError(d.Milliseconds())), nil
			}
			return a.res, a.err
		case <-tctx.Done():
			if ctx.Err() != nil {
				// The caller cancelled: wait for the body to settle so the
				// registry reports the cancellation with what the body did.
				a := <-done
				return a.res, a.err
			}
			return ErrorResult(TimeoutError(d.Milliseconds())), nil
		}
	}
}

func aborted(r Result) bool {
	return r.Error != nil && r.Error.Info != nil && (r.Error.Info.Code == CodeAborted || r.Error.Info.Code == CodeAbortedBeforeDispatch)
}

// Retry returns an execute wrapper that runs the rest of the chain up to
// attempts times while retryable says the failed result is worth another try
// and the caller has not cancelled. A nil retryable retries every failure that
// is not a cancellation or a timeout.
func Retry(attempts int, retryable func(Result) bool) Wrapper {
	if attempts < 1 {
		attempts = 1
	}
	if retryable == nil {
		retryable = func(r Result) bool {
			return !aborted(r) && !(r.Error != nil && r.Error.Info != nil && r.Error.Info.Code == CodeToolTimeout)
		}
	}
	return func(ctx context.Context, call *Call, next func(context.Context) (Result, error)) (Result, error) {
		var res Result
		var err error
		for i := 0; i < attempts; i++ {
			res, err = next(ctx)
			if err != nil || !res.IsError || ctx.Err() != nil || !retryable(res) {
				return res, err
			}
		}
		return res, err
	}
}

// Meter counts calls, failures and time spent per tool.
type Meter struct {
	mu    sync.Mutex
	stats map[string]MeterStats
	now   func() time.Time
}

// MeterStats are the counters of one tool.
type MeterStats struct {
	// Calls is the number of dispatched calls.
	Calls int
	// Errors is the number of failed results.
	Errors int
	// Total is the summed wall time inside the wrapper.
	Total time.Duration
}

// NewMeter returns an empty meter; now may be nil (time.Now).
func NewMeter(now func() time.Time) *Meter {
	if now == nil {
		now = time.Now
	}
	return &Meter{stats: map[string]MeterStats{}, now: now}
}

// Wrapper returns the execute wrapper that records into m.
func (m *Meter) Wrapper() Wrapper {
	return func(ctx context.Context, call *Call, next func(context.Context) (Result, error)) (Result, error) {
		start := m.now()
		res, err := next(ctx)
		elapsed := m.now().Sub(start)
		m.mu.Lock()
		s := m.stats[call.Name()]
		s.Calls++
		if err != nil || res.IsError {
			s.Errors++
		}
		s.Total += elapsed
		m.stats[call.Name()] = s
		m.mu.Unlock()
		return res, err
	}
}

// Stats returns the counters of tool name.
func (m *Meter) Stats(name string) MeterStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats[name]
}
