package diff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/dshsim/dshsim/harness/oracle"
)

// HeadlessProfile is the profile of the cases run through upstream's
// headless front end (the product CLI's headless profile) instead of the
// ACP agent: [GenerateHeadless] makes them, [Checker.Frontend] runs them.
const HeadlessProfile = "headless"

// headlessModes are the permission modes a headless case runs under:
// the profile's default (workspace-write, approval ask with nobody to
// ask), read-only (ask too) and danger-full-access (approval never).
var headlessModes = []string{oracle.WorkspaceWrite, oracle.WorkspaceWrite, oracle.ReadOnly, oracle.DangerFullAccess}

// headlessMoves are the calls a headless case makes: the unattended path
// meets the same tools, and the escalations and confined writes that ask
// with no approval channel to answer.
var headlessMoves = []func(*gen){moveBashOutput, moveBashTimeout, moveRead, moveWrite, moveEdit, moveFSFailure,
	moveEscalateWrite, moveEscalateBash, moveEscalateEdit, moveConfinedWrite}

// GenerateHeadless makes headless case index of seed, gen-headless-<seed>-<index>:
// one task, two to six moves, under one of the permission modes, from its own
// PCG stream (seeded with the seed and the index, on a stream of its own, so
// that it is not the ACP case of the same numbers). Approvals asked get no
// answer: the headless path has no channel for one (the moves' queued
// answers are dropped).
func GenerateHeadless(seed uint64, index int) *Case {
	r := rand.New(rand.NewPCG(seed^0x6865_6164_6c65_7373, uint64(index)))
	g := &gen{r: r, areas: map[string]bool{}, ws: map[string]string{}}
	g.seedFiles()
	g.set.Reminder = true // the base profile mounts the repeated-call reminder
	g.set.Mode = headlessModes[r.IntN(len(headlessModes))]
	moves := headlessMoves
	if g.set.Mode == oracle.DangerFullAccess {
		moves = moves[:6] // nothing is wider to escalate to
	}
	n := 2 + r.IntN(5)
	for range n {
		moves[r.IntN(len(moves))](g)
	}
	g.steps = append(g.steps, oracle.Step{Text: "DONE"})
	for _, st := range g.steps {
		for i, call := range st.Calls {
			// The workspace's parent is a temporary directory of a random
			// name in upstream's headless runs (runLoaderSmoke's mkdtemp), and
			// a result prints a path there whole: the case writes beside it in
			// /tmp instead.
			st.Calls[i].Args = bytes.ReplaceAll(call.Args, []byte(`"../`), []byte(`"/tmp/`))
		}
	}
	c := &Case{Seed: seed, Index: index, Name: fmt.Sprintf("gen-headless-%d-%d", seed, index), Settings: g.set, Profile: HeadlessProfile,
		Script: &oracle.Script{Prompts: []string{"Run the generated calls, then reply DONE."}, Turns: [][]oracle.Step{g.steps}, Workspace: g.ws}}
	for a := range g.areas {
		if a != AreaApproval {
			c.Areas = append(c.Areas, a)
		}
	}
	sort.Strings(c.Areas)
	return c
}
