package replay

import (
	"context"
	"fmt"
	"time"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/askuser"
	"github.com/dshsim/dshsim/tools/goal"
	"github.com/dshsim/dshsim/tools/planmode"
)

// goalSettleLimit bounds the wait for a /goal command's rounds (upstream's
// goal-multi-turn-actions.e2e.ts waits 120 s for its turns in replay).
const goalSettleLimit = 120 * time.Second

// command runs a web user's slash command between turns (the agent is
// idle: every prompt before it was answered): its command/run (a user
// source), what run does, and its command/done with run's kind and text.
func (c *client) command(i int, name, args string, run func() (kind, text string, err error)) error {
	id := fmt.Sprintf("cmd-replay-%d", i+1)
	if _, err := c.root.append(session.KindCommandRun, commandRun{CommandID: id, Name: name, Args: args, Source: map[string]string{"kind": "user"}}); err != nil {
		return err
	}
	kind, text, err := run()
	if err != nil {
		return fmt.Errorf("steps[%d] /%s%s: %w", i, name, args, err)
	}
	_, err = c.root.append(session.KindCommandDone, commandDone{CommandID: id, Kind: kind, Text: text})
	return err
}

// permission is a web user's /permission command: the switch's events
// ([stack.Stack.SwitchPreset]).
func (c *client) permission(i int, preset string) error {
	return c.command(i, recording.PermissionOp, " "+preset, func() (string, string, error) {
		_, err := c.stack.SwitchPreset(preset)
		return "success", "Permission preset: " + preset + ".", err
	})
}

// goal is a web user's /goal command with its raw input (goal.Service.Command:
// its goal/change between command/run and command/done). The goal changed,
// the agent announces its idle again, as upstream's goal-round driver
// drives on goal/changed: a goal the command armed runs its rounds, and
// the step lasts until they settled (the agent idle, the goal no longer
// active and armed), as upstream's e2e file awaits the rounds' turns.
func (c *client) goal(ctx context.Context, i int, raw string) error {
	goals := c.stack.Goals()
	if goals == nil {
		return fmt.Errorf("steps[%d] /%s: the composition has no goal domain", i, recording.GoalOp)
	}
	err := c.command(i, recording.GoalOp, raw, func() (string, string, error) {
		res, err := goals.Command(c.root.log, raw)
		return res.Kind, res.Text, err
	})
	if err != nil {
		return err
	}
	c.root.reannounce()
	deadline := time.Now().Add(goalSettleLimit)
	for !c.goalSettled(goals) {
		if ctx.Err() != nil || closed(c.root.stopped) {
			return nil
		}
		if time.Now().After(deadline) {
			c.flag(fmt.Sprintf("steps[%d] /%s: the goal's rounds did not settle within %s", i, recording.GoalOp, goalSettleLimit))
			return nil
		}
		time.Sleep(waitPoll)
	}
	return nil
}

// goalSettled reports whether the agent is idle with no round to run: no
// goal, or one that is not active and armed (a failure to read it settles
// too: the driver flags it).
func (c *client) goalSettled(goals *goal.Service) bool {
	if !c.root.Idle() {
		return false
	}
	v, err := goals.Get(c.root.log)
	return err != nil || v == nil || v.Phase != goal.PhaseActive || v.Activation != goal.Armed
}

// plan is a web user's /plan command with its raw input
// (planmode.Service.Command: plan/mode between command/run and
// command/done); a switch it committed after a model request queues plan
// mode's user-switch notice for the next step, without waking the agent
// (upstream's agent.inject); its message, when it has one, is then sent
// as the user's (a turn opens for it, entering the notice first) and
// answered.
func (c *client) plan(ctx context.Context, i int, raw string) error {
	pm := c.stack.PlanMode()
	if pm == nil {
		return fmt.Errorf("steps[%d] /%s: the composition has no plan mode", i, recording.PlanOp)
	}
	var msg string
	err := c.command(i, recording.PlanOp, raw, func() (string, string, error) {
		res, err := pm.Plan.Command(c.root.log, raw)
		msg = res.Message
		if err == nil && res.Notice != nil {
			err = c.root.inbox.add(nextStep, pluginMessage(*res.Notice))
		}
		return res.Kind, res.Text, err
	})
	if err != nil || msg == "" {
		return err
	}
	_, err = c.promptAnswered(ctx, promptMessage([]pipeline.Block{pipeline.TextBlock(msg)}))
	return err
}

// webUIAnswers is the web UI as the answerer of a model's questions: a
// plan review is approved (plan-review.e2e.ts clicks Approve on the plan
// decision card); any other question is refused, since no web scenario
// the replay drives answers one.
func webUIAnswers(_ context.Context, qs []askuser.Question) ([]askuser.Answer, error) {
	if len(qs) != 1 || qs[0].Intent == nil || qs[0].Intent.Kind != planmode.ReviewID {
		return nil, fmt.Errorf("the replay's web UI answers a plan review only")
	}
	return []askuser.Answer{{ID: qs[0].ID, Selected: []string{qs[0].Intent.Approve}}}, nil
}
