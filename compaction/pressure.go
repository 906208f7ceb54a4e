package compaction

import (
	"context"
	"errors"
	"fmt"
)

// Inputs are what the pressure check reads beyond the log: the meter
// (Measure over the log's events unless set: a replay prices the
// recorded request envelope) and the routed model's context window.
type Inputs struct {
	// Measure prices the next request of a log (nil: [Measure]).
	Measure func(log Log) (Measurement, error)
	// Window is the context window of a route; ok false when the model
	// has none (upstream: "no context capacity", a warning).
	Window func(route Target) (window int, ok bool, err error)
}

// InputError is an input the pressure check could not read (the meter or
// the context window failed): not upstream's warning but a failure of
// the caller, which must not be taken for "no compaction".
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Pressure is upstream's between-step check (the agent/pre-step listener
// of dsh-compaction-basic, compactIfNeeded "pressure"): on a routed log,
// with no compaction open, when the model has a context window and the
// policy a valid spec for it, and the measured next request is at least
// the threshold, the pruner (when mounted) runs and the log is measured
// again; then up to compactionRetries+1 compactions each keep the spec's
// tail, until the measure falls below the threshold. res is the last
// compaction (nil: none ran). warn is what upstream logs as a warning and
// lets the turn go on with (a SpecError, a failed compaction, a session
// still above the threshold); err an [InputError] or a failure of the log.
func (e *Engine) Pressure(ctx context.Context, log Log, in Inputs, summarize Summarize) (res *Result, warn, err error) {
	if !e.policy.Auto || ctx.Err() != nil {
		return nil, nil, nil
	}
	events, err := log.Events()
	if err != nil {
		return nil, nil, err
	}
	route, ok := e.route(events)
	conversation, cok := RoutedTarget(events)
	if !ok || !cok {
		return nil, nil, nil
	}
	pol := e.policy.For(route)
	// upstream measures first; the measure is pure, and is taken only
	// once the check needs it (a model with no window needs none)
	window, has, err := in.Window(route)
	if err != nil {
		return nil, nil, &InputError{err}
	}
	if err := inspectEntry(events).inactive("automatic pressure compaction"); err != nil {
		return nil, err, nil
	}
	if !has {
		return nil, &SpecError{route, fmt.Sprintf("compaction-basic: no context capacity for %s/%s; configure contextWindow on that adapter model", route.Provider, route.Model)}, nil
	}
	spec, werr := pol.Spec(window)
	if werr != nil {
		return nil, werr, nil
	}
	measure := in.Measure
	if measure == nil {
		measure = measureLog
	}
	above, err := measureAbove(log, measure, spec.ThresholdTokens)
	if err != nil || !above {
		return nil, nil, err
	}
	if e.pruner != nil {
		if err := e.prune(log); err != nil {
			return nil, err, nil
		}
	}
	return e.compactUnder(ctx, log, spec, pol, measure, pol.summarizer(conversation, summarize))
}

// measureAbove measures log and says whether its next request is priced
// at least threshold; a bounded measure whose bounds straddle the
// threshold is an [InputError] naming the input it could not read.
func measureAbove(log Log, measure func(Log) (Measurement, error), threshold int) (bool, error) {
	m, err := measure(log)
	if err != nil {
		return false, &InputError{err}
	}
	switch {
	case m.TotalTokens >= threshold:
		return true, nil
	case m.Unknown == "" || m.Upper < threshold:
		return false, nil
	}
	return false, &InputError{fmt.Errorf("%s: the next request is priced between %d and %d tokens, across the threshold %d, so whether upstream compacted cannot be known",
		m.Unknown, m.TotalTokens, m.Upper, threshold)}
}

// measureLog is [Measure] over a log's events.
func measureLog(log Log) (Measurement, error) {
	events, err := log.Events()
	if err != nil {
		return Measurement{}, err
	}
	return Measure(events)
}

// compactUnder compacts while the log's measure is at least the spec's
// threshold, at most compactionRetries+1 times.
func (e *Engine) compactUnder(ctx context.Context, log Log, spec Spec, pol Policy, measure func(Log) (Measurement, error), summarize Summarize) (res *Result, warn, err error) {
	above, err := measureAbove(log, measure, spec.ThresholdTokens)
	if err != nil || !above {
		return nil, nil, err
	}
	for attempt := 0; attempt <= pol.CompactionRetries; attempt++ {
		region, ok, serr := e.selectNow(log, spec.RetainTokens)
		if serr != nil {
			return res, serr, nil
		}
		if !ok && res == nil {
			return nil, nil, nil
		}
		if !ok {
			break // a checkpoint alone is left before the tail, still too big
		}
		r, cerr := CompactRegion(ctx, log, region.Start, region.End, summarize)
		if cerr != nil {
			return res, cerr, nil
		}
		res = r
		if above, err = measureAbove(log, measure, spec.ThresholdTokens); err != nil || !above {
			return res, nil, err
		}
	}
	m, err := measure(log)
	if err != nil {
		return res, nil, &InputError{err}
	}
	return res, fmt.Errorf("compaction still above threshold after %d compaction attempts (%d estimated tokens >= threshold %d)",
		pol.CompactionRetries+1, m.TotalTokens, spec.ThresholdTokens), nil
}

// IsInputError reports whether err is an [InputError].
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}
