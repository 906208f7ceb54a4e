package landlock

import "github.com/dshsim/dshsim/sandbox/internal/llsys"

// NestRights is what the layer nested under a restricted thread's domain
// handles (see [NewNestRuleset]), given whether the kernel (and the cap in
// use) offers scopes (ABI 6): then the signal scope alone (handled is 0),
// so the command may not signal a process outside its own domain, the
// thread above it included; without scopes, where an empty ruleset is
// refused, the one right no command of ours holds anyway (creating a block
// device needs CAP_MKNOD, which a confined command never has), so the
// layer narrows nothing and only its boundary counts. Pure.
func NestRights(scopes bool) (handled, scoped uint64) {
	if scopes {
		return 0, ScopeSignal
	}
	return AccessMakeBlock, 0
}

// NewNestRuleset builds the ruleset a command enforces on itself before its
// first instruction, one layer below the domain of the thread that started
// it ([NestRights]), for a kernel of ABI kernel capped at abiCap (0 = no
// cap). Its purpose is the domain boundary itself: Landlock lets a domain
// trace, and (with the scope) signal, only itself and the domains nested
// below it, so a command in a layer of its own cannot trace or signal the
// restricted thread it was started from, nor the rest of the process that
// thread belongs to, nor a command of another call (each gets a layer of
// its own).
func NewNestRuleset(kernel, abiCap int) (*Ruleset, error) {
	handled, scoped := NestRights(ScopeAvailable(kernel, abiCap) == nil)
	fd, err := llsys.CreateRuleset(handled, scoped)
	if err != nil {
		return nil, rulesetError(err)
	}
	return &Ruleset{FD: fd, ABI: EffectiveABI(kernel, abiCap)}, nil
}
