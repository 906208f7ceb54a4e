package sims

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/autoreview"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
)

// reviewerName names the constructed reviewer in the output and the audit.
const reviewerName = "constructed reviewer"

// reviewCase is one scripted call: what the constructed reviewer and the
// constructed user do with it.
type reviewCase struct {
	title   string
	target  string // file the call creates outside the workspace
	verdict func(ctx context.Context) (autoreview.Verdict, error)
	user    pipeline.ApprovalOutcome // the user's answer if asked
}

func verdict(approve bool, risk, rationale string) func(context.Context) (autoreview.Verdict, error) {
	return func(context.Context) (autoreview.Verdict, error) {
		return autoreview.Verdict{Approve: approve, Risk: risk, Rationale: rationale}, nil
	}
}

// reviewSim is one run of the auto-review sim: the rig, the directory
// outside the workspace every call writes into, and the scripts of the
// constructed reviewer and user, by call id.
type reviewSim struct {
	r       *scopeRig
	outside string
	release chan struct{} // frees the reviewer that never answers

	// The reviewer runs in its own goroutine (one outlives its time-out):
	// the script and the count are shared under a lock.
	mu      sync.Mutex
	byCall  map[string]reviewCase
	shown   []string // what the user was shown, this call
	reviews atomic.Int64
}

// reviewCases are the calls made with the switch on.
func reviewCases(release <-chan struct{}) []reviewCase {
	return []reviewCase{
		{title: "the reviewer approves", target: "approved", verdict: verdict(true, "low", "Creates one empty marker file.")},
		{title: "the reviewer rejects; the user is asked and allows once", target: "rejected-allowed", verdict: verdict(false, "high", "Writes outside the project."), user: pipeline.AllowedOnce},
		{title: "the reviewer rejects; the user is asked and rejects", target: "rejected-rejected", verdict: verdict(false, "high", "Writes outside the project."), user: pipeline.Rejected},
		{title: "the reviewer fails", target: "failed", user: pipeline.AllowedOnce, verdict: func(context.Context) (autoreview.Verdict, error) {
			return autoreview.Verdict{}, errors.New("model endpoint returned 503")
		}},
		{title: "the reviewer does not answer within its 500ms", target: "timed-out", user: pipeline.AllowedOnce, verdict: func(context.Context) (autoreview.Verdict, error) {
			<-release
			return autoreview.Verdict{Approve: true, Risk: "low", Rationale: "too late"}, nil
		}},
	}
}

// The auto-review sim: the page's experimental option on the real stack,
// with a constructed reviewer and a constructed user.
func runAutoReview(env *harness.Env) (map[string][]byte, error) {
	r, err := newScopeRig(env)
	if err != nil {
		return nil, err
	}
	defer r.close()
	outside, release, err := scratchDir("autoreview")
	if err != nil {
		return nil, err
	}
	defer release()
	r.norm.Path(outside, "<outside>")
	sim := &reviewSim{r: r, outside: outside, release: make(chan struct{}), byCall: map[string]reviewCase{}}
	defer close(sim.release)

	r.printf("Auto review (experimental, off by default; our design, no upstream code): the real stack (pipeline, approval service,\n")
	r.printf("bash under Landlock, sandbox workspace-write, approval ask). A constructed reviewer stands in for the model that rates\n")
	r.printf("each call (its verdicts are scripted); a constructed user answers the questions. Every call creates a file in <outside>,\n")
	r.printf("a directory outside the workspace that workspace-write does not let a command write.\n")

	off, _, _, err := r.stack("session-off", sandbox.WorkspaceWrite, sim.adjust(false, 0))
	if err != nil {
		return nil, err
	}
	r.printf("\nswitch off (the default): the call runs confined, nobody rates it\n")
	if err := sim.call(off, "call-off", reviewCase{target: "off"}); err != nil {
		return nil, err
	}
	on, err := sim.switchedOn()
	if err != nil {
		return nil, err
	}
	if err := sim.child(on, len(reviewCases(nil))+1); err != nil {
		return nil, err
	}
	return map[string][]byte{"txt/auto-review.txt": r.b.Bytes()}, nil
}

func (sim *reviewSim) script(callID string) reviewCase {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	return sim.byCall[callID]
}

func (sim *reviewSim) setScript(callID string, c reviewCase) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	sim.byCall[callID] = c
}

// adjust configures a session: the constructed user and, when on, Auto
// review with the constructed reviewer and timeout.
func (sim *reviewSim) adjust(on bool, timeout time.Duration) func(*stack.Config) {
	return func(cfg *stack.Config) {
		cfg.Answer = func(_ context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
			sim.r.asked++
			if req.DisplayReason != nil {
				sim.shown = append(sim.shown, req.DisplayReason.En)
			}
			return sim.script(req.CallID).user, nil
		}
		if on {
			cfg.AutoReview = autoreview.Config{Enabled: true, Name: reviewerName, Timeout: timeout, Tools: []string{"bash"}}
			cfg.Reviewer = autoreview.ReviewerFunc(func(ctx context.Context, s autoreview.Subject) (autoreview.Verdict, error) {
				sim.reviews.Add(1)
				return sim.script(s.CallID).verdict(ctx)
			})
		}
	}
}

// switchedOn runs every case with the switch on (the time-out case on a
// session whose reviewer has 500ms) and returns the session.
func (sim *reviewSim) switchedOn() (*stack.Stack, error) {
	r := sim.r
	on, _, _, err := r.stack("session-on", sandbox.WorkspaceWrite, sim.adjust(true, 10*time.Second))
	if err != nil {
		return nil, err
	}
	slow, _, _, err := r.stack("session-slow", sandbox.WorkspaceWrite, sim.adjust(true, 500*time.Millisecond))
	if err != nil {
		return nil, err
	}
	r.printf("\nswitch on, reviewer %q (its verdicts scripted)\n", reviewerName)
	for i, c := range reviewCases(sim.release) {
		s := on
		if c.target == "timed-out" {
			s = slow
		}
		r.printf("%d. %s\n", i+1, c.title)
		if err := sim.call(s, fmt.Sprintf("call-%d", i+1), c); err != nil {
			return nil, err
		}
	}
	return on, nil
}

// call runs one scripted bash call on s and prints what happened: the
// result, the file, what the user was asked and shown, the approval events.
func (sim *reviewSim) call(s *stack.Stack, callID string, c reviewCase) error {
	r := sim.r
	sim.setScript(callID, c)
	r.asked, sim.shown = 0, nil
	log := s.Agent().Session
	before, err := log.Events()
	if err != nil {
		return err
	}
	res := runCall(s.Execute, callID, "bash", map[string]any{"command": "touch " + filepath.Join(sim.outside, c.target), "description": "create a marker"})
	_, statErr := os.Stat(filepath.Join(sim.outside, c.target))
	r.printf("  bash touch <outside>/%s → %q\n", c.target, res.Text())
	r.printf("  <outside>/%s created: %v; the user was asked: %d time(s)", c.target, statErr == nil, r.asked)
	if len(sim.shown) > 0 {
		r.printf(", shown %q", sim.shown[0])
	}
	r.printf("\n")
	logged, err := events(log, len(before))
	if err != nil {
		return err
	}
	if len(logged) == 0 {
		r.printf("  log: no approval events\n")
	} else {
		r.printf("  log:\n    %s\n", strings.Join(logged, "\n    "))
	}
	return nil
}

// child runs case n: a child delegated by the session, never reviewed.
func (sim *reviewSim) child(on *stack.Stack, n int) error {
	r := sim.r
	child, err := on.Delegate(stack.Delegation{ID: "child", SessionID: "session-on-child", LogPath: filepath.Join(r.dir, "on-child.jsonl"), Now: fixedNow})
	if err != nil {
		return err
	}
	defer child.End()
	if err := child.BeginTurn(); err != nil {
		return err
	}
	sim.setScript("call-child", reviewCase{verdict: verdict(true, "low", "would approve")})
	reviewedBefore := sim.reviews.Load()
	res := runCall(child.Execute, "call-child", "bash", map[string]any{"command": "touch child-marker", "description": "create a marker in the workspace"})
	r.printf("%d. a child delegated by the session (its scope is not below the session agent's, so it is never reviewed)\n", n)
	r.printf("  child: bash touch child-marker → %q; reviews: %d\n", res.Text(), sim.reviews.Load()-reviewedBefore)
	return nil
}
