package replay

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/subagent"
)

// The fixtures of upstream's subagent overlays are plugins of its snapshot
// suite, not product behaviour; the recordings made with them show their
// effects, so the replay emulates them (each named in the result's notes):
//
//   - the settlement marker (every snapshot overlay): an empty
//     .dsh-snapshot-subagent-settled in the workspace on every live
//     subagent/end, which waitForFile steps wait for;
//   - durability-failure: a child's pre-step is held until three messages
//     reached its inbox and its parent's turn 1 ended, and its turn 3
//     fails at its checkpoint ("snapshot disk full");
//   - published-run-failure: every child refuses its prompt ("snapshot
//     published run failed") and its disposal fails after disposing
//     ("snapshot published handle disposal failed");
//   - report-fence: a child's pre-step waits until its parent's turn 1
//     ended, the parent's step 2 of turn 1 waits until a child reached its
//     pre-step, and after turn 1 the idle parent runs a maintenance task
//     until the child's settlement notice is queued;
//   - result-diagnostic: a provider snapshot-diagnostic behind
//     subagent_codex whose runs end at once with fixed failures;
//   - settlement-fence (headless): the session's pre-step of turn 1 step
//     2 waits until a child's settlement notice reached its inbox;
//   - product-providers: the out-of-process product instances of the
//     recording's tool pin (Codex, Claude Code), composed for their schemas;
//     a call of one fails closed (no such provider is built here).
//   - descriptorless-child (headless, a seed of the test file): before the
//     resume, a cold child of the session is persisted whose header
//     classifies it a subagent but whose log holds no descriptor event
//     (turn 1 started and interrupted), and the stack adopts it as upstream's
//     subagent catalog reads it from storage.

// SettlementMarker is the file the settlement marker writes.
const SettlementMarker = ".dsh-snapshot-subagent-settled"

// emulation is one replay's emulated fixtures.
type emulation struct {
	kind string
	ws   string
	root func() *driver // the session's agent (set once it exists)

	mu       sync.Mutex
	inserts  map[*driver]int // messages queued to each child
	reached  chan struct{}   // a child reached its pre-step (report fence)
	reachedO sync.Once
}

func newEmulation(kind, ws string) *emulation {
	return &emulation{kind: kind, ws: ws, inserts: map[*driver]int{}, reached: make(chan struct{})}
}

// note names the emulated fixtures in the result's notes ("" when none):
// the settlement marker when marks, and the overlay's fixture.
func (f *emulation) note(marks bool) string {
	const marker = "the settlement marker (" + SettlementMarker + " on every subagent/end)"
	switch {
	case marks && f.kind == "":
		return "emulated fixture: " + marker
	case marks:
		return "emulated fixtures: " + marker + " and " + f.kind + " (docs/replay.md, Emulated fixtures)"
	case f.kind != "":
		return "emulated fixture: " + f.kind + " (docs/replay.md, Emulated fixtures)"
	}
	return ""
}

// onEnd is the settlement marker.
func (f *emulation) onEnd(stack.SubagentEnd) {
	_ = os.WriteFile(filepath.Join(f.ws, SettlementMarker), nil, 0o644)
}

// rootEnded reports whether the session's turn 1 ended.
func (f *emulation) rootEnded() bool {
	r := f.root()
	if r == nil {
		return false
	}
	_, ok := r.turnEnded(1)
	return ok
}

// errDiskFull and the published-run failures are the fixtures' texts.
var (
	errDiskFull        = errors.New("snapshot disk full")
	errPublishedRun    = errors.New("snapshot published run failed")
	errPublishedHandle = errors.New("snapshot published handle disposal failed")
)

// childHooks are a child's fixture hooks.
func (f *emulation) childHooks(m *member) agentHooks {
	switch f.kind {
	case recording.FixtureDurabilityFailure:
		return agentHooks{
			followup: func(d *driver) error { f.count(d); return nil },
			preStep: func(ctx context.Context, d *driver, turn, step int) error {
				if turn == 3 && step == 1 {
					return errDiskFull
				}
				d.yield()
				return holdUntil(ctx, func() bool { return f.inserted(d) >= 3 && f.rootEnded() })
			},
		}
	case recording.FixturePublishedFailure:
		return agentHooks{
			followup: func(*driver) error { return errPublishedRun },
			close:    func(*driver) error { return errPublishedHandle },
		}
	case recording.FixtureReportFence:
		return agentHooks{preStep: func(ctx context.Context, d *driver, turn, step int) error {
			f.reachedO.Do(func() { close(f.reached) })
			d.yield()
			return holdUntil(ctx, f.rootEnded)
		}}
	}
	return agentHooks{}
}

// rootHooks are the session agent's fixture hooks.
func (f *emulation) rootHooks() agentHooks {
	if f.kind == recording.FixtureSettlementFence {
		return agentHooks{preStep: func(ctx context.Context, d *driver, turn, step int) error {
			if turn != 1 || step != 2 {
				return nil
			}
			d.yield()
			return holdUntil(ctx, func() bool { return settledIn(d, nextStep) || settledIn(d, nextTurn) })
		}}
	}
	if f.kind != recording.FixtureReportFence {
		return agentHooks{}
	}
	return agentHooks{
		preStep: func(ctx context.Context, d *driver, turn, step int) error {
			if turn == 1 && step == 2 {
				d.yield()
				select {
				case <-f.reached:
				case <-ctx.Done():
				}
			}
			return nil
		},
		turnEnded: func(d *driver, turn int) {
			if turn != 1 {
				return
			}
			d.beginMaintenance()
			go func() {
				defer d.endMaintenance()
				d.sched.waitUntil(d.base, func() bool { return settledQueued(d) })
			}()
		},
	}
}

// settledQueued reports whether a settlement notice waits in d's next-turn
// inbox.
func settledQueued(d *driver) bool { return settledIn(d, nextTurn) }

// settledIn reports whether a settlement notice waits in d's target list.
func settledIn(d *driver, target string) bool {
	for _, m := range d.inbox.pending(target) {
		if m.kind == "subagent-settled" {
			return true
		}
	}
	return false
}

func (f *emulation) count(d *driver) {
	f.mu.Lock()
	f.inserts[d]++
	f.mu.Unlock()
}

func (f *emulation) inserted(d *driver) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inserts[d]
}

// holdUntil polls cond until it holds or ctx ends.
func holdUntil(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(waitPoll):
		}
	}
	return nil
}

// subagentConfig is the delegation composition of rec: upstream's default
// (its tools, its caps, unless the recording's settings change them) and
// the fixture's instances and providers.
func (f *emulation) subagentConfig(rec *recording.Recording) stack.SubagentsConfig {
	cfg := stack.DefaultSubagents()
	frontendDelegation(rec, &cfg)
	set := rec.Settings
	if set.SubagentMaxDepth != nil {
		for i := range cfg.Instances {
			d := *set.SubagentMaxDepth
			cfg.Instances[i].MaxDepth = &d
		}
	}
	for i := range cfg.Instances {
		t, ok := set.SubagentTools[cfg.Instances[i].Name]
		if !ok {
			continue
		}
		if t.BackgroundMode != "" {
			cfg.Instances[i].Background = t.BackgroundMode
		}
		if t.EnableRunInBackground != nil {
			cfg.Instances[i].NoBackground = !*t.EnableRunInBackground
		}
	}
	cfg.AskUser = set.AskUser
	if rec.Frontend == recording.Web {
		cfg.AskUser, cfg.Ask = true, webQuestions(set.UIQuestions)
	}
	cfg.WorkflowMaxConcurrentAgents = set.WorkflowMaxConcurrentAgents
	switch f.kind {
	case recording.FixtureResultDiagnostic:
		cfg.Instances = append(cfg.Instances, subagent.Instance{Name: "subagent_codex", Provider: diagnosticProvider})
		cfg.Providers = append(cfg.Providers, &diagnostics{})
	case recording.FixtureProductProviders:
		for _, name := range productInstances(rec) {
			cfg.Instances = append(cfg.Instances, subagent.Instance{Name: name, Provider: name})
			cfg.Providers = append(cfg.Providers, productProvider(name))
		}
	}
	return cfg
}

// productInstances are the product delegation tools of rec's tool pin:
// every subagent_* tool but subagent_fork.
func productInstances(rec *recording.Recording) []string {
	var out []string
	if rec.ToolSchemas == nil {
		return nil
	}
	for _, t := range rec.ToolSchemas.Initial {
		if strings.HasPrefix(t.Name, "subagent_") && t.Name != "subagent_fork" {
			out = append(out, t.Name)
		}
	}
	return out
}

// productProvider stands for an out-of-process product provider (Codex,
// Claude Code): composed for its tool's schema, it starts nothing.
type productProvider string

func (p productProvider) Name() string                { return string(p) }
func (p productProvider) Info() subagent.ProviderInfo { return subagent.ProviderInfo{} }
func (p productProvider) Start(context.Context, subagent.Request) (subagent.Run, error) {
	return nil, errors.New("out-of-process subagent providers are not built here: " + string(p) + " starts no child")
}

// diagnosticProvider is the result-diagnostic fixture's provider.
const diagnosticProvider = "snapshot-diagnostic"

// diagnosticResults are its fixed results, served in order: the Claude
// Code diagnostic (foreground, then background), then the Codex one.
var diagnosticResults = []string{
	"Product subagent failure (product: Claude Code; stage: query-run; category: error_max_budget_usd)",
	"Product subagent failure (product: Claude Code; stage: query-run; category: error_max_budget_usd)",
	"Product subagent failure (product: Codex; stage: turn; category: httpConnectionFailed; HTTP status: 503)",
	"Product subagent failure (product: Codex; stage: turn; category: httpConnectionFailed; HTTP status: 503)",
}

// diagnostics is the result-diagnostic fixture's provider: each run ends at
// once, failed with the next fixed diagnostic and a partial text.
type diagnostics struct {
	mu   sync.Mutex
	next int
}

func (d *diagnostics) Name() string                { return diagnosticProvider }
func (d *diagnostics) Info() subagent.ProviderInfo { return subagent.ProviderInfo{} }
func (d *diagnostics) Start(ctx context.Context, req subagent.Request) (subagent.Run, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.next >= len(diagnosticResults) {
		return nil, errors.New("the result-diagnostic fixture has no fifth result")
	}
	diag := diagnosticResults[d.next]
	d.next++
	done := make(chan struct{})
	close(done)
	partial, _ := json.Marshal(map[string]string{"type": "text", "text": "partial assistant text"})
	return &fixedRun{id: newUUID(), done: done, res: subagent.Result{Stop: delegation.StopError, Diagnostic: diag, Output: []json.RawMessage{partial}}}, nil
}

// fixedRun is a run whose result is fixed.
type fixedRun struct {
	id   string
	done chan struct{}
	res  subagent.Result
}

func (r *fixedRun) ID() string                                      { return r.id }
func (r *fixedRun) Done() <-chan struct{}                           { return r.done }
func (r *fixedRun) Result(context.Context) (subagent.Result, error) { return r.res, nil }
func (r *fixedRun) Dispose() error                                  { return nil }

// seed writes what the emulated fixture seeds before the session's first
// prompt: descriptorless-child's cold child (the others seed nothing).
func (f *emulation) seed(st *stack.Stack, dir string, parent session.Header) error {
	if f.kind != recording.FixtureColdChild {
		return nil
	}
	return seedColdChild(st, dir, parent)
}

// seedColdChild is subagent-diagnostic.snapshot.ts's seedDescriptorlessChild:
// a child of the session parent, persisted in dir before the resume with
// origin "subagent" and no descriptor event, adopted by the stack.
func seedColdChild(st *stack.Stack, dir string, parent session.Header) error {
	h := session.Header{ID: session.NewID(), Cwd: parent.Cwd, ParentSession: parent.ID, Origin: "subagent", DelegationDepth: parent.DelegationDepth + 1}
	path := filepath.Join(dir, h.ID+".jsonl")
	log, err := session.Create(path, h)
	if err != nil {
		return err
	}
	_, err = log.Append(session.KindTurnStart, map[string]int{"turn": 1})
	if err == nil {
		_, err = log.Append(session.KindTurnEnd, map[string]any{"turn": 1, "reason": map[string]string{"kind": "interrupted"}})
	}
	if err = errors.Join(err, log.Close()); err != nil {
		return err
	}
	return st.AdoptChild(path)
}
