package dynamic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/tools/code"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
	"github.com/dshsim/dshsim/tools/cordis"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Host keeps the session's dynamic packages and registers the tools of
// the running ones: it wraps the bodies of cordis_define, cordis_run,
// cordis_stop and cordis_undefine (whatever answers them: a served body
// here) and acts on their successful results, one at a time.
type Host struct {
	// Runner evaluates the host code.
	Runner Runner
	// Register registers a tool for every agent, returning its
	// unregistration.
	Register func(pipeline.Tool) (func(), error)
	// Taken lists the names a dynamic tool may not take, whatever their
	// case ([CheckName]): every tool its composition constructed (those it
	// left out too) and the names it trusts or registers later; run_code
	// (upstream's reserved name) and the running dynamic tools are taken
	// always.
	Taken func() []string

	lifecycle sync.Mutex // held by each lifecycle call's action, so that two runs never interleave
	mu        sync.Mutex
	packages  map[pkg]string            // the host half's code of each defined package
	running   map[string][]registration // pluginId: its tools
}

// registration is a running dynamic tool: its name and its
// unregistration.
type registration struct {
	name string
	undo func()
}

// pkg is a package's ids, kept apart (a "/" in either names nothing else).
type pkg struct{ plugin, id string }

// New is the host of a stack's dynamic packages: their tools run in a
// Node runtime of cfg (node not usable: every evaluation fails,
// [ErrNoRuntime]), confined by confiner under policy's mode for the call,
// and register through register under a name none of taken's.
func New(cfg noderuntime.Config, policy func(*pipeline.Call) (sandbox.Policy, error), confiner spawn.Confiner, register func(pipeline.Tool) (func(), error), taken func() []string) *Host {
	r := Runner{Policy: policy, Confiner: confiner}
	if rt, err := noderuntime.New(cfg); err == nil {
		r.Runtime = rt
	}
	return &Host{Runner: r, Register: register, Taken: taken}
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
	case cordis.StopName:
		after = func(_ context.Context, _ *pipeline.Call, m meta) error { h.stop(m.PluginID); return nil }
	case cordis.UndefineName:
		after = func(_ context.Context, _ *pipeline.Call, m meta) error { h.undefine(m.PluginID); return nil }
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
		h.lifecycle.Lock()
		err = after(ctx, call, m)
		h.lifecycle.Unlock()
		if err != nil {
			return pipeline.Output{}, fmt.Errorf("%s: %s/%s: %w", t.Name(), m.PluginID, m.PackageID, err)
		}
		return out, nil
	}
	return t
}

// defined keeps the defined package's host half (at most
// [MaxCodeBytes], and [MaxPackages] kept).
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
	if err := CheckCode(args.Code.Host); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.packages == nil {
		h.packages = map[pkg]string{}
	}
	k := pkg{m.PluginID, m.PackageID}
	_, kept := h.packages[k]
	if err := CheckPackages(len(h.packages), !kept); err != nil {
		return err
	}
	h.packages[k] = args.Code.Host
	return nil
}

// run registers the tools of the package now running, replacing those of
// the plugin's earlier run: all of them or, when one definition fails its
// check or its registration, none (the call fails, and the earlier run's
// are gone). A package this session did not define through cordis_define
// (a served cordis_run whose package the recording defined elsewhere) has
// no host code here: the body's result stands and nothing registers.
func (h *Host) run(ctx context.Context, call *pipeline.Call, m meta) error {
	h.mu.Lock()
	code, ok := h.packages[pkg{m.PluginID, m.PackageID}]
	h.mu.Unlock()
	h.stop(m.PluginID)
	if !ok || code == "" {
		return nil // no host code known here, or a client half alone: no host tool
	}
	tools, err := h.Runner.Definitions(ctx, call, code)
	if err != nil {
		return err
	}
	if err := h.admit(tools); err != nil {
		return err
	}
	var regs []registration
	for _, t := range tools {
		u, err := h.Register(t)
		if err != nil {
			unregister(regs)
			return fmt.Errorf("register %s: %w", t.Name, err)
		}
		regs = append(regs, registration{t.Name, u})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running == nil {
		h.running = map[string][]registration{}
	}
	h.running[m.PluginID] = regs
	return nil
}

func unregister(regs []registration) {
	for _, r := range regs {
		r.undo()
	}
}

// admit checks that tools may join the running ones: their count
// ([CheckCounts]) and their names ([CheckName]).
func (h *Host) admit(tools []pipeline.Tool) error {
	if h.Register == nil {
		return errors.New("no registry to register dynamic tools in")
	}
	taken := []string{code.Name}
	h.mu.Lock()
	for _, regs := range h.running {
		for _, r := range regs {
			taken = append(taken, r.name)
		}
	}
	h.mu.Unlock()
	if err := CheckCounts(len(tools), len(taken)-1); err != nil {
		return err
	}
	if h.Taken != nil {
		taken = append(taken, h.Taken()...)
	}
	for i, t := range tools {
		if err := CheckName(t.Name, taken); err != nil {
			return fmt.Errorf("registration %d: %w", i+1, err)
		}
	}
	return nil
}

// stop unregisters the plugin's tools.
func (h *Host) stop(plugin string) {
	h.mu.Lock()
	regs := h.running[plugin]
	delete(h.running, plugin)
	h.mu.Unlock()
	unregister(regs)
}

// undefine stops the plugin and forgets its packages.
func (h *Host) undefine(plugin string) {
	h.stop(plugin)
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range h.packages {
		if k.plugin == plugin {
			delete(h.packages, k)
		}
	}
}
