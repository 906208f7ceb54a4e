package sims

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
)

type policyStep struct {
	title string
	do    func(r *policy.Resolver, svc *approval.Service, log *session.Log) ([]session.Event, error)
}

func switchTo(name string) policyStep {
	return policyStep{title: "/permission " + name, do: func(r *policy.Resolver, svc *approval.Service, log *session.Log) ([]session.Event, error) {
		return r.SwitchPreset(log, name, svc)
	}}
}

// The policy-context sim: a real session log; preset switches appended as a
// user would make them; the runtime context recomputed from the log before
// each request.
func runPolicyContext(env *harness.Env) (map[string][]byte, error) {
	ws, err := env.TempDir()
	if err != nil {
		return nil, err
	}
	n := harness.NewNormalizer().Workspace(ws)
	log, err := session.Create(filepath.Join(ws, "session.jsonl"), session.Header{ID: "policy-context", Cwd: ws})
	if err != nil {
		return nil, err
	}
	defer log.Close()
	resolver, err := policy.NewResolver(policy.Config{DefaultMode: sandbox.WorkspaceWrite, Root: ws, Approval: approval.Ask})
	if err != nil {
		return nil, err
	}
	svc, err := approval.New(approval.WithPolicy(approval.Ask))
	if err != nil {
		return nil, err
	}
	steps := []policyStep{
		{title: "new session (default preset workspace-write)", do: func(r *policy.Resolver, _ *approval.Service, log *session.Log) ([]session.Event, error) {
			return r.SeedSession(log, "workspace-write")
		}},
		switchTo("read-only"),
		switchTo("danger-full-access"),
		switchTo("danger-full-access"),
		{title: "/approval ask (only the approval knob changes)", do: func(_ *policy.Resolver, svc *approval.Service, log *session.Log) ([]session.Event, error) {
			return svc.SetPolicy(log, approval.Ask)
		}},
		switchTo("workspace-write"),
	}
	var b bytes.Buffer
	b.WriteString("policy context: a real session log; preset switches appended as a user would; the runtime context recomputed from the log before each request\n")
	for i, s := range steps {
		appended, err := s.do(resolver, svc, log)
		if err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i+1, s.title, err)
		}
		preset, err := resolver.CurrentPreset(log)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "\n%d. %s → preset %s\n", i+1, s.title, preset)
		if len(appended) == 0 {
			b.WriteString("   events appended: none\n")
		}
		for _, e := range appended {
			fmt.Fprintf(&b, "   + %s %s\n", e.Type, n.String(string(e.Data)))
		}
		ctx, err := resolver.SyncContext(log)
		if err != nil {
			return nil, err
		}
		if ctx == nil {
			b.WriteString("   runtime context: unchanged, nothing appended\n")
			continue
		}
		events, err := log.Events()
		if err != nil {
			return nil, err
		}
		text, _ := policy.LastSnapshot(events)
		b.WriteString("   + user/message (runtime context) the model sees next:\n")
		for _, line := range strings.Split(n.String(text), "\n") {
			b.WriteString(strings.TrimRight("     | "+line, " ") + "\n")
		}
	}
	return map[string][]byte{"txt/policy-context.txt": b.Bytes()}, nil
}
