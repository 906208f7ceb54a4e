package compaction

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dshsim/dshsim/pipeline/session"
)

// CodeContextWindowExceeded is the failure code of a request the model's
// context window could not hold (upstream's CONTEXT_WINDOW_EXCEEDED_CODE).
const CodeContextWindowExceeded = "CONTEXT_WINDOW_EXCEEDED"

// Engine is one agent's automatic compaction (upstream's
// BasicCompactionEngine): context-overflow recovery of a failed model
// call, bounded per the policy's maxOverflowRetries between two assistant
// messages (or turns).
type Engine struct {
	policy Policy
	// route is the route the policy is chosen by (RoutedTarget unless
	// WithRoute says otherwise); pruner prunes tool results first (nil:
	// none mounted).
	route  func([]session.Event) (Target, bool)
	pruner *Pruner
	// retries counts the recoveries since mark; an assistant/message or
	// turn/end after mark resets it.
	retries int
	mark    int64
}

// NewEngine is an agent's engine under policy p.
func NewEngine(p Policy) *Engine { return &Engine{policy: p, mark: -1, route: RoutedTarget} }

// WithRoute chooses the policy by route (the routed target of a log)
// instead of the log's last request header: a replay whose own model
// names itself routes by the recorded model.
func (e *Engine) WithRoute(route func([]session.Event) (Target, bool)) *Engine {
	e.route = route
	return e
}

// WithPruner mounts the tool-result pruner beside the engine (upstream's
// toolResultPruner in the same realm): both triggers prune before they
// select a range.
func (e *Engine) WithPruner(p *Pruner) *Engine {
	e.pruner = p
	return e
}

// Overflow is upstream's agent/request-error listener: a failed call with
// code CONTEXT_WINDOW_EXCEEDED, on a routed session, within the retry
// bound, compacts the head of the surface up to the last balanced cut
// (no tail kept) and asks for the call to be retried (retry true) when the
// surface was replaced, even if the compaction failed after that; else
// the original failure stands. warn says why a compaction that ran did
// not help (nil: it did, or none ran). A cancelled ctx never retries.
func (e *Engine) Overflow(ctx context.Context, log Log, code string, summarize Summarize) (retry bool, warn error) {
	if !e.policy.Auto || code != CodeContextWindowExceeded || ctx.Err() != nil {
		return false, nil
	}
	events, err := log.Events()
	if err != nil {
		return false, err
	}
	routed, ok := RoutedTarget(events)
	policyRoute, pok := e.route(events)
	if !ok || !pok {
		return false, nil
	}
	if e.resetSince(events) {
		e.retries = 0
	}
	pol := e.policy.For(policyRoute)
	if e.retries >= pol.MaxOverflowRetries {
		return false, nil
	}
	before, err := Fold(events)
	if err != nil {
		return false, err
	}
	err = e.prune(log)
	var region Region
	if err == nil {
		region, ok, err = e.selectNow(log, 0)
	}
	if err == nil && ok {
		_, err = CompactRegion(ctx, log, region.Start, region.End, pol.summarizer(routed, summarize))
	}
	after, ferr := e.progress(log)
	if ferr != nil {
		return false, ferr
	}
	progressed := after.Replacements > before.Replacements
	switch {
	case err != nil && ctx.Err() != nil:
		return false, fmt.Errorf("context-overflow compaction failed: %w; cancellation prevents retry", err)
	case err != nil && !progressed:
		return false, fmt.Errorf("context-overflow compaction failed: %w; preserving the original request error", err)
	case ctx.Err() != nil || !progressed:
		return false, err
	}
	e.retries++
	if err != nil {
		return true, fmt.Errorf("context-overflow compaction failed after durable surface progress: %w; retrying from the replacement surface", err)
	}
	return true, nil
}

// progress folds the log's surface after a compaction attempt, and marks
// its end for the retry bound.
func (e *Engine) progress(log Log) (*Surface, error) {
	events, err := log.Events()
	if err != nil {
		return nil, err
	}
	if n := len(events); n > 0 {
		e.mark = events[n-1].Seq
	}
	return Fold(events)
}

// resetSince reports whether an assistant/message or turn/end came after
// the engine's last recovery (upstream resets the bound on both).
func (e *Engine) resetSince(events []session.Event) bool {
	for i := len(events) - 1; i >= 0 && events[i].Seq > e.mark; i-- {
		if t := events[i].Type; t == session.KindAssistantMessage || t == session.KindTurnEnd {
			return true
		}
	}
	return false
}

// RoutedTarget is the route of the log's last request header (its
// config's provider and model, both non-empty).
func RoutedTarget(events []session.Event) (Target, bool) {
	last, ok := session.Last(events, session.KindRequestHeader)
	if !ok {
		return Target{}, false
	}
	var d struct {
		Header struct {
			Config struct {
				Provider string `json:"provider"`
				Model    string `json:"model"`
			} `json:"config"`
		} `json:"header"`
	}
	if json.Unmarshal(last.Data, &d) != nil || d.Header.Config.Provider == "" || d.Header.Config.Model == "" {
		return Target{}, false
	}
	return Target{Provider: d.Header.Config.Provider, Model: d.Header.Config.Model}, true
}

// summarizer is summarize with the policy's route and cap (conversation:
// the routed target).
func (p Policy) summarizer(conversation Target, summarize Summarize) Summarize {
	return func(ctx context.Context, in Input) (Summary, error) {
		in.Target, in.MaxTokens = p.SummaryTarget(conversation), p.MaxTokens
		return summarize(ctx, in)
	}
}

// prune runs the pruner over the log's current surface (none mounted:
// nothing).
func (e *Engine) prune(log Log) error {
	if e.pruner == nil {
		return nil
	}
	_, err := e.pruner.PruneSession(log)
	return err
}

// selectNow selects the range to compact on the log's current surface,
// keeping a tail of retain tokens.
func (e *Engine) selectNow(log Log, retain int) (Region, bool, error) {
	events, err := log.Events()
	if err != nil {
		return Region{}, false, err
	}
	s, err := Fold(events)
	if err != nil {
		return Region{}, false, err
	}
	return SelectRange(s, retain)
}

// SummaryTarget is the summary call's route: the policy's summarization
// route when set, else the conversation's (routed).
func (p Policy) SummaryTarget(routed Target) Target {
	if p.Summarization.Provider != "" {
		return p.Summarization
	}
	return routed
}
