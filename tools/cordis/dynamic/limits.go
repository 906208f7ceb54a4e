package dynamic

import (
	"fmt"
	"strings"
)

// The bounds of what a session's dynamic packages may hold (upstream has
// none; docs/stack.md, Departures): the session's code and the model's
// definitions are an attacker's, and a registry they could grow without
// bound is refused at the bound, naming it.
const (
	// MaxCodeBytes bounds one package's host code.
	MaxCodeBytes = 1 << 20
	// MaxPackages bounds the host halves the session keeps defined
	// (cordis_undefine releases a plugin's).
	MaxPackages = 64
	// MaxToolsPerPackage bounds the tools one package registers.
	MaxToolsPerPackage = 32
	// MaxTools bounds the dynamic tools registered at once, every running
	// plugin's together.
	MaxTools = 64
	// MaxDescriptionBytes bounds a tool's or a parameter's description.
	MaxDescriptionBytes = 4096
	// MaxParameters bounds a tool's parameters.
	MaxParameters = 64
	// MaxEnum bounds a parameter's enum.
	MaxEnum = 256
	// MaxResultDepth bounds how deep an execute or render result nests
	// arrays and objects (the session log's JSON could not hold it much
	// deeper).
	MaxResultDepth = 1000
)

// CheckCode refuses host code over [MaxCodeBytes].
func CheckCode(code string) error {
	if len(code) > MaxCodeBytes {
		return fmt.Errorf("code.host: %d bytes, more than the %d a dynamic package may hold", len(code), MaxCodeBytes)
	}
	return nil
}

// CheckPackages refuses a new host half when kept already hold
// [MaxPackages] (redefining a kept one is not new).
func CheckPackages(kept int, isNew bool) error {
	if isNew && kept >= MaxPackages {
		return fmt.Errorf("the session keeps %d dynamic packages, the most it may: cordis_undefine a plugin first", kept)
	}
	return nil
}

// CheckCounts refuses a package registering more than
// [MaxToolsPerPackage] tools, or enough to take the running plugins'
// tools (others, this plugin's earlier run stopped) over [MaxTools].
func CheckCounts(registering, others int) error {
	switch {
	case registering > MaxToolsPerPackage:
		return fmt.Errorf("the package registers %d tools, more than the %d one package may", registering, MaxToolsPerPackage)
	case others+registering > MaxTools:
		return fmt.Errorf("%d dynamic tools run already and the package registers %d: more than the %d the session may run at once; cordis_stop a plugin first", others, registering, MaxTools)
	}
	return nil
}

// CheckName refuses a dynamic tool's name that is, ignoring ASCII case,
// one of taken (the session's tools and the names its composition
// reserves: a dynamic tool never stands in for a tool a guard, an
// allowlist or a reader of the log knows by name, nor looks like one).
func CheckName(name string, taken []string) error {
	for _, t := range taken {
		if strings.EqualFold(name, t) {
			if name == t {
				return fmt.Errorf("harness.defineTool name: %q is taken by a tool of this session", name)
			}
			return fmt.Errorf("harness.defineTool name: %q differs only in case from %q, a tool of this session", name, t)
		}
	}
	return nil
}
