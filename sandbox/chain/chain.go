package chain

import (
	"context"
	"sync"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/internal/seal"
)

// Config configures a [Confiner].
type Config struct {
	// Sandbox is the provider's configuration: the backend chain, the
	// runner, the ABI cap, the hardening, injected probes. Its
	// LandlockInProcess is set by New (a value given is replaced).
	Sandbox sandbox.Config
	// Runner makes the Landlock backend run the runner (landlock-run) on
	// every call instead of the in-process path, and the report says so
	// ([RunnerConfigured]): for a run that must show the runner, such as a
	// recording of upstream's missing runner.
	Runner bool
}

// RunnerConfigured is the fallback reason of a confiner whose configuration
// asks for the runner ([Config.Runner]).
const RunnerConfigured = "the configuration asks for the Landlock runner (landlock-run) instead of the in-process path"

// Confiner confines each call through the platform's backend chain, with the
// Landlock backend applied in-process ([inproc.Launcher], threads reused per
// policy) and the runner as its fallback. Safe for concurrent use.
type Confiner struct {
	provider *sandbox.Provider
	runner   bool
	operator bool // an operator runnerCommand replaces the chain
	opts     inproc.Options

	once     sync.Once
	launcher *inproc.Launcher // nil when the in-process path cannot be used
	why      string           // why not, then
}

// New returns the confiner of cfg; its errors are sandbox.NewProvider's.
// Nothing is probed and no thread is made before the first call that
// selects Landlock.
func New(cfg Config) (*Confiner, error) {
	c := &Confiner{runner: cfg.Runner, opts: inproc.Options{ABICap: cfg.Sandbox.LandlockABICap, Harden: cfg.Sandbox.Harden}}
	sc := cfg.Sandbox
	sc.LandlockInProcess = nil
	c.operator = len(sc.RunnerCommand) > 0
	if !cfg.Runner && !c.operator {
		sc.LandlockInProcess = c.probe
	}
	p, err := sandbox.NewProvider(sc)
	if err != nil {
		return nil, err
	}
	c.provider = p
	return c, nil
}

// probe is the provider's LandlockInProcess: the in-process path's
// enforcement, or why it cannot be used.
func (c *Confiner) probe() (sandbox.Enforcement, error) {
	l, why := c.inProcess()
	if l == nil {
		return "", whyError(why)
	}
	return l.Enforcement(), nil
}

type whyError string

func (e whyError) Error() string { return string(e) }

// inProcess makes the launcher on first use and probes it (a throwaway
// thread restricted as landlock-run --probe restricts itself): the
// launcher, or nil and why the in-process path cannot be used.
func (c *Confiner) inProcess() (*inproc.Launcher, string) {
	c.once.Do(func() {
		if c.runner {
			c.why = RunnerConfigured
			return
		}
		l, err := inproc.NewWithOptions(c.opts)
		if err == nil {
			if err = l.Probe(); err != nil {
				l.Close()
			}
		}
		if err != nil {
			c.why = "the in-process path cannot be used in this process: " + err.Error()
			return
		}
		c.launcher = l
	})
	return c.launcher, c.why
}

// Confine confines argv for policy p: when the chain selects Landlock, in
// this process ([inproc.Launcher.Confine]: argv as given, started from a
// thread restricted for p; the report's backend is [inproc.Backend]), or,
// when the in-process path cannot be used, through the runner with the
// reason in [sandbox.ConfinedArgv.Fallback]; any other backend (bwrap, an
// operator runnerCommand, Seatbelt, the ACL runner) as the provider wraps
// it. Errors are the provider's: bad input, [*sandbox.UnavailableError]
// when no backend is usable.
func (c *Confiner) Confine(ctx context.Context, argv []string, p sandbox.Policy) (sandbox.ConfinedArgv, error) {
	if !c.landlock() {
		return c.provider.Confine(ctx, argv, p)
	}
	if l, _ := c.inProcess(); l != nil {
		return l.Confine(ctx, argv, p)
	}
	out, err := c.provider.Confine(ctx, argv, p)
	if err == nil && out.Backend == sandbox.BackendLandlock {
		_, out.Fallback = c.inProcess()
	}
	return out, err
}

// landlock reports whether the provider's chain selects Landlock (selecting
// it on first use); never with an operator runnerCommand, which skips the
// chain.
func (c *Confiner) landlock() bool {
	if c.operator {
		return false
	}
	b, _ := c.provider.Selected()
	return b == sandbox.BackendLandlock
}

// Selected is the backend a call gets and its enforcement (selecting it on
// first use): [inproc.Backend] when the chain selects Landlock and the
// in-process path runs, else the provider's ("" when none is usable).
func (c *Confiner) Selected() (string, sandbox.Enforcement) {
	if c.landlock() {
		if l, _ := c.inProcess(); l != nil {
			return inproc.Backend, l.Enforcement()
		}
	}
	return c.provider.Selected()
}

// Fallback is why the runner confines this confiner's Landlock calls
// instead of the in-process path ("" when the in-process path runs, or
// when the chain did not select Landlock).
func (c *Confiner) Fallback() string {
	if !c.landlock() {
		return ""
	}
	_, why := c.inProcess()
	return why
}

// Provider is the provider under the chain: the argv contract
// ([sandbox.Provider.Confine] wraps argv in a runner), for a caller that
// starts the command itself rather than through package sandbox/spawn.
func (c *Confiner) Provider() *sandbox.Provider { return c.provider }

// Close ends the in-process path's threads and closes its rulesets. Calls
// must not race with Close.
func (c *Confiner) Close() error {
	c.once.Do(func() { c.why = "closed" })
	if c.launcher != nil {
		return c.launcher.Close()
	}
	return nil
}

// Sealed makes Confiner a spawn.Confiner (the interface is closed to the sandbox tree).
func (*Confiner) Sealed(seal.Token) {}
