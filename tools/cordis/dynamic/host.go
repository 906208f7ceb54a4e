package dynamic

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
	"github.com/dshsim/dshsim/tools/cordis"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Host keeps the session's dynamic packages and registers the tools of
// the running ones: it wraps the bodies of cordis_define, cordis_run,
// cordis_stop and cordis_undefine (whatever answers them: a served body
// here) and acts on their successful results.
type Host struct {
	// Runner evaluates the host code.
	Runner Runner
	// Register registers a tool for every agent, returning its
	// unregistration.
	Register func(pipeline.Tool) (func(), error)

	mu       sync.Mutex
	packages map[string]string   // pluginId/packageId: the host half's code
	running  map[string][]func() // pluginId: the unregistrations of its tools
}

// New is the host of a stack's dynamic packages: their tools run in a
// Node runtime of cfg (node not usable: every evaluation fails,
// [ErrNoRuntime]), confined by confiner under policy's mode for the call,
// and register through register.
func New(cfg noderuntime.Config, policy func(*pipeline.Call) (sandbox.Policy, error), confiner spawn.Confiner, register func(pipeline.Tool) (func(), error)) *Host {
	r := Runner{Policy: policy, Confiner: confiner}
	if rt, err := noderuntime.New(cfg); err == nil {
		r.Runtime = rt
	}
	return &Host{Runner: r, Register: register}
}

// meta is the ids a lifecycle result's meta holds.
type meta struct {
	PluginID  string `json:"pluginId"`
	PackageID string `json:"packageId"`
}

// ids are the plugin and package a lifecycle call acted on: its result's
// meta, else its arguments (cordis_run, cordis_stop and cordis_undefine
// name them; cordis_define's come from the host, in its result).
func ids(resultMeta, args json.RawMessage) meta {
	var m meta
	if json.Unmarshal(resultMeta, &m) == nil && m.PluginID != "" {
		return m
	}
	m = meta{}
	_ = json.Unmarshal(args, &m) // the schema check has passed them
	return m
}

// Wrap wraps the lifecycle tools' bodies (any other tool is returned as
// is).
func (h *Host) Wrap(t toolreg.Tool) toolreg.Tool {
	var after func(ctx context.Context, call *pipeline.Call, m meta) error
	switch t.Name() {
	case cordis.DefineName:
		after = h.defined
	case cordis.RunName:
		after = h.run
	case cordis.StopName, cordis.UndefineName:
		after = func(_ context.Context, _ *pipeline.Call, m meta) error { h.stop(m.PluginID); return nil }
	default:
		return t
	}
	inner := t.Def.Run
	t.Def.Run = func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		out, err := inner(ctx, call)
		if err != nil {
			return out, err
		}
		m := ids(out.Meta, call.Args())
		if m.PluginID == "" {
			return pipeline.Output{}, fmt.Errorf("%s: neither the result nor the arguments name a pluginId", t.Name())
		}
		if err := after(ctx, call, m); err != nil {
			return pipeline.Output{}, fmt.Errorf("%s: %s/%s: %w", t.Name(), m.PluginID, m.PackageID, err)
		}
		return out, nil
	}
	return t
}

// defined keeps the defined package's host half.
func (h *Host) defined(_ context.Context, call *pipeline.Call, m meta) error {
	var args struct {
		Code struct {
			Host string `json:"host"`
		} `json:"code"`
	}
	if err := json.Unmarshal(call.Args(), &args); err != nil {
		return fmt.Errorf("arguments: %v", err)
	}
	if m.PackageID == "" {
		return fmt.Errorf("the result names no packageId")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.packages == nil {
		h.packages = map[string]string{}
	}
	h.packages[m.PluginID+"/"+m.PackageID] = args.Code.Host
	return nil
}

// run registers the tools of the package now running, replacing those of
// the plugin's earlier run: all of them or, when one definition fails its
// check or its registration, none (the call fails). A package this session
// did not define through cordis_define (a served cordis_run whose package
// the recording defined elsewhere) has no host code here: the body's
// result stands and nothing registers.
func (h *Host) run(ctx context.Context, call *pipeline.Call, m meta) error {
	h.mu.Lock()
	code, ok := h.packages[m.PluginID+"/"+m.PackageID]
	h.mu.Unlock()
	h.stop(m.PluginID)
	if !ok || code == "" {
		return nil // no host code known here, or a client half alone: no host tool
	}
	tools, err := h.Runner.Definitions(ctx, call, code)
	if err != nil {
		return err
	}
	var undo []func()
	for _, t := range tools {
		u, err := h.Register(t)
		if err != nil {
			for _, f := range undo {
				f()
			}
			return fmt.Errorf("register %s: %w", t.Name, err)
		}
		undo = append(undo, u)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running == nil {
		h.running = map[string][]func(){}
	}
	h.running[m.PluginID] = undo
	return nil
}

// stop unregisters the plugin's tools.
func (h *Host) stop(plugin string) {
	h.mu.Lock()
	undo := h.running[plugin]
	delete(h.running, plugin)
	h.mu.Unlock()
	for _, f := range undo {
		f()
	}
}
