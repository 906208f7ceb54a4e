package sims

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/session"
)

// PipelineTarget is the path every hookup tries to delete.
const PipelineTarget = "/etc/passwd"

// DeletePathTool is the constructed delete_path tool: it reads what it would
// delete (a real stat) and records the deletion it would perform, but never
// removes anything.
func DeletePathTool(record func(path string)) pipeline.Tool {
	return pipeline.Tool{
		Name:        "delete_path",
		Description: "Delete a file (constructed for the simulation: it only records what it would delete).",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
			var a struct {
				Path string `json:"path"`
			}
			if err := call.DecodeArgs(&a); err != nil {
				return pipeline.Output{}, err
			}
			fi, err := os.Stat(a.Path)
			if err != nil {
				return pipeline.Output{}, err
			}
			record(a.Path)
			return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(fmt.Sprintf("would delete %s (a %s file; constructed tool: nothing removed)", a.Path, kind(fi)))}}, nil
		},
	}
}

func kind(fi os.FileInfo) string {
	if fi.IsDir() {
		return "directory"
	}
	return "regular"
}

type hookup struct {
	title string
	setup func(r *pipeline.Registry, svc *approval.Service)
}

func denySystemFiles(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
	var a struct{ Path string }
	if err := call.DecodeArgs(&a); err != nil {
		return pipeline.Decision{}, err
	}
	if strings.HasPrefix(a.Path, "/etc/") {
		return pipeline.Deny("refusing to delete " + a.Path + ": system files are protected"), nil
	}
	return next()
}

func allowWithoutNext(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
	return pipeline.Allow(), nil
}

func protectGuard(ctx context.Context, call *pipeline.Call) (string, bool) {
	var a struct{ Path string }
	if err := call.DecodeArgs(&a); err != nil {
		return "cannot read the arguments: " + err.Error(), true
	}
	if strings.HasPrefix(a.Path, "/etc/") {
		return "refusing to delete " + a.Path + ": system files are protected", true
	}
	return "", false
}

func askListener(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
	return pipeline.Ask("delete " + PipelineTarget), nil
}

func pipelineHookups() []hookup {
	return []hookup{
		{title: "no listener, no guard", setup: func(*pipeline.Registry, *approval.Service) {}},
		{title: "a listener denies paths under /etc/", setup: func(r *pipeline.Registry, _ *approval.Service) {
			r.OnPreExecute(denySystemFiles)
		}},
		{title: "same deny listener; an outer listener (prepended) returns allow without calling next()", setup: func(r *pipeline.Registry, _ *approval.Service) {
			r.OnPreExecute(denySystemFiles)
			r.PrependPreExecute(allowWithoutNext)
		}},
		{title: "the same veto as a guard; the outer allow-without-next() listener stays", setup: func(r *pipeline.Registry, _ *approval.Service) {
			r.AddGuard(protectGuard)
			r.PrependPreExecute(allowWithoutNext)
		}},
		{title: "a listener returns allow with the path changed to /tmp/harmless", setup: func(r *pipeline.Registry, _ *approval.Service) {
			r.OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
				d, err := next()
				d.Args = json.RawMessage(`{"path":"/tmp/harmless"}`)
				return d, err
			})
		}},
		{title: "a listener asks; the (constructed) user rejects", setup: func(r *pipeline.Registry, svc *approval.Service) {
			r.OnPreExecute(askListener)
			svc.Answer(func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
				return pipeline.Rejected, nil
			})
		}},
		{title: "a listener asks; no answerer is registered", setup: func(r *pipeline.Registry, _ *approval.Service) {
			r.OnPreExecute(askListener)
		}},
	}
}

// The pipeline sim: the real tool registry with seven hookups of listeners
// and guards around a constructed delete_path tool aimed at /etc/passwd.
func runPipeline(env *harness.Env) (map[string][]byte, error) {
	dir, err := env.TempDir()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("tool pipeline: seven hookups; the real registry and approval service, a constructed delete_path tool, target /etc/passwd\n")
	b.WriteString("(the constructed tool stats its target and records the deletion it would perform; it never removes anything)\n")
	for i, h := range pipelineHookups() {
		var deleted []string
		r := pipeline.NewRegistry()
		svc, err := approval.New()
		if err != nil {
			return nil, err
		}
		r.SetApprover(svc)
		if _, err := r.Register(DeletePathTool(func(p string) { deleted = append(deleted, p) })); err != nil {
			return nil, err
		}
		h.setup(r, svc)
		log, err := session.Create(filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i+1)), session.Header{ID: fmt.Sprintf("pipeline-%d", i+1), Cwd: dir})
		if err != nil {
			return nil, err
		}
		if _, err := log.Append(session.KindTurnStart, session.TurnStart{Turn: 1}); err != nil {
			return nil, err
		}
		agent := &pipeline.Agent{ID: "constructed-agent", Session: log}
		res := r.Execute(pipeline.NewCall(fmt.Sprintf("call-%d", i+1), "delete_path", json.RawMessage(`{"path":"`+PipelineTarget+`"}`), agent, context.Background()))
		log.Close()
		verdict := "refused, body not run"
		if len(deleted) > 0 {
			verdict = "allowed, body ran"
		}
		fmt.Fprintf(&b, "%d. %s → %s: %s\n", i+1, h.title, verdict, res.Text())
	}
	return map[string][]byte{"txt/pipeline.txt": b.Bytes()}, nil
}
